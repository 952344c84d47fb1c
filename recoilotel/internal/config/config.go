// Package config is the configuration recoilotel's options set, shared
// with its gRPC subpackage.
package config

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of recoil's spans and metrics.
const ScopeName = "github.com/recoil-go/recoil"

// Config is what the options set; New fills the unset fields.
type Config struct {
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
	Propagators    propagation.TextMapPropagator
}

// New applies opts and fills the rest from the global providers.
func New[O ~func(*Config)](opts []O) Config {
	var c Config
	for _, o := range opts {
		o(&c)
	}
	if c.MeterProvider == nil {
		c.MeterProvider = otel.GetMeterProvider()
	}
	if c.TracerProvider == nil {
		c.TracerProvider = otel.GetTracerProvider()
	}
	if c.Propagators == nil {
		c.Propagators = otel.GetTextMapPropagator()
	}
	return c
}

// Attempts returns what starts the span of each attempt, for both the
// HTTP and the gRPC layer.
func (c Config) Attempts() *Attempts {
	return &Attempts{
		tracer: c.TracerProvider.Tracer(ScopeName),
		prop:   c.Propagators,
		inject: len(c.Propagators.Fields()) > 0,
		kind:   trace.WithSpanKind(trace.SpanKindClient),
	}
}

// Attempts starts attempt spans, CLIENT spans under the caller's, and
// writes their context into the outgoing request for the server. It is
// safe for concurrent use.
type Attempts struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	inject bool                  // prop writes any field
	kind   trace.SpanStartOption // boxed once, not per span
}

// Start starts the span of one attempt, named name and carrying attrs, as
// a child of ctx's span.
func (a *Attempts) Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return a.tracer.Start(ctx, name, a.kind, trace.WithAttributes(attrs...))
}

// Injects reports whether Inject writes anything, so that a caller can
// leave its request as it is when the propagator has no fields.
func (a *Attempts) Injects() bool { return a.inject }

// Inject writes ctx's span context into carrier with the propagator.
func (a *Attempts) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	a.prop.Inject(ctx, carrier)
}
