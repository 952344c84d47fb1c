package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/recoilotel"
)

// defaultServiceName is the traces' service.name when OTEL_SERVICE_NAME
// (or OTEL_RESOURCE_ATTRIBUTES) names none.
const defaultServiceName = "recoil-proxy"

// traceFlushTimeout bounds how long a shutdown waits for the spans not
// yet exported.
const traceFlushTimeout = 5 * time.Second

// tracesWanted reports whether the standard OpenTelemetry environment asks
// for traces: an OTLP endpoint is named (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and OTEL_TRACES_EXPORTER is not
// "none".
func tracesWanted(getenv func(string) string) bool {
	if strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")) == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// checkEndpoints refuses an OTLP endpoint that is not an absolute URL,
// which the exporter would pass over for its default, localhost:4318.
func checkEndpoints(getenv func(string) string) error {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
			err = errors.New("want http://host:port or https://host:port")
		}
		if err != nil {
			return fmt.Errorf("%s=%q: %w", k, v, err)
		}
	}
	return nil
}

// tracing is the command's OpenTelemetry: a tracer provider exporting
// over OTLP/HTTP, and the W3C trace-context propagator.
type tracing struct {
	tp   *sdktrace.TracerProvider
	prop propagation.TextMapPropagator
}

// setupTracing returns the command's tracing when the environment asks for
// traces (tracesWanted), nil otherwise — no exporter, no goroutine. The
// exporter reads the OTEL_EXPORTER_OTLP_* variables itself; the resource's
// service.name is OTEL_SERVICE_NAME's, or recoil-proxy. Tracing that
// cannot be set up is a warning on log, never a reason not to serve; so
// are the exporter's failures later.
func setupTracing(ctx context.Context, log *slog.Logger) *tracing {
	if !tracesWanted(os.Getenv) {
		return nil
	}
	if err := checkEndpoints(os.Getenv); err != nil {
		log.Warn("OpenTelemetry traces not exported", "err", err.Error())
		return nil
	}
	// The SDK's own errors and warnings, as the command's lines; its
	// informational ones (below slog's Info) are not written.
	otel.SetLogger(logr.FromSlogHandler(log.Handler()))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("OpenTelemetry", "err", err.Error())
	}))
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		log.Warn("OpenTelemetry traces not exported", "err", err.Error())
		return nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", defaultServiceName)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, over the default
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		// A partial resource (a malformed OTEL_RESOURCE_ATTRIBUTES) is
		// still the best there is.
		log.Warn("OpenTelemetry resource incomplete", "err", err.Error())
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	log.Info("OpenTelemetry traces exported over OTLP/HTTP")
	return &tracing{tp: tp, prop: propagation.TraceContext{}}
}

// wrap is the proxy's Options.Trace: one span per attempt of each call
// (recoilotel), under the client's span, which the request's traceparent
// header names.
func (t *tracing) wrap(rt *recoilhttp.Transport) http.RoundTripper {
	return continueTrace{
		next: recoilotel.NewTransport(rt, recoilotel.WithTracerProvider(t.tp), recoilotel.WithPropagators(t.prop)),
		prop: t.prop,
	}
}

// shutdown exports the spans not yet exported and stops the provider,
// waiting at most traceFlushTimeout.
func (t *tracing) shutdown(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		log.Warn("OpenTelemetry traces not all exported", "err", err.Error())
	}
}

// continueTrace continues the client's trace: it reads the trace context
// from the request's headers into its context before the traced Transport
// makes the attempts' spans. The proxy passes the client's request
// context and headers (traceparent and tracestate included) to the
// route's Transport, so this is where the server side's extraction goes
// without a handler of the command's own; the attempts' spans then replace
// those headers with their own on the way out.
type continueTrace struct {
	next http.RoundTripper
	prop propagation.TextMapPropagator
}

func (c continueTrace) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := c.prop.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
	return c.next.RoundTrip(req.WithContext(ctx))
}
