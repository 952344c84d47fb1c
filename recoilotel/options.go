package recoilotel

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/recoil-go/recoil/recoilotel/internal/config"
)

// Option sets where recoil's spans and metrics go. Without options the
// global providers and propagator (package otel's) are used, as they are
// when the Option is called.
type Option func(*config.Config)

// WithMeterProvider records metrics with mp instead of the global
// MeterProvider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config.Config) { c.MeterProvider = mp }
}

// WithTracerProvider makes spans with tp instead of the global
// TracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config.Config) { c.TracerProvider = tp }
}

// WithPropagators injects each attempt's span context into its request with
// p instead of the global propagator, so the server's span joins the
// attempt's.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *config.Config) { c.Propagators = p }
}
