// Package config is the configuration recoilotel's options set, shared
// with its gRPC subpackage.
package config

import (
	"go.opentelemetry.io/otel"
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

// Tracer returns the tracer for recoil's spans.
func (c Config) Tracer() trace.Tracer { return c.TracerProvider.Tracer(ScopeName) }
