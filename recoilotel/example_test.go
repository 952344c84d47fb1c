package recoilotel_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/recoilotel"
)

// A policy's Observer records the call in the meter's instruments and
// marks each wait, with where it came from, on the caller's span.
func ExampleNewMetrics() {
	reader := sdkmetric.NewManualReader() // a PeriodicReader with an exporter, in a service
	m, err := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		fmt.Println(err)
		return
	}
	obs, err := m.Policy("payments") // one per dependency; never a URL
	if err != nil {
		fmt.Println(err)
		return
	}
	p := &recoil.Policy{Backoff: backoff.Constant(10 * time.Millisecond)}
	obs.Instrument(p)

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	ctx, charge := tp.Tracer("app").Start(context.Background(), "charge")
	failures := 2
	err = recoil.Do(ctx, p, func(context.Context) error {
		if failures--; failures >= 0 {
			return errors.New("connection reset by peer")
		}
		return nil
	})
	charge.End()
	fmt.Println("call:", err)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Histogram[int64]:
				fmt.Printf("%s: sum %d over %d call\n", mt.Name, d.DataPoints[0].Sum, d.DataPoints[0].Count)
			case metricdata.Histogram[float64]:
				fmt.Printf("%s: sum %g s over %d\n", mt.Name, d.DataPoints[0].Sum, d.DataPoints[0].Count)
			}
		}
	}
	for _, e := range spans.GetSpans()[0].Events {
		fmt.Print(e.Name)
		for _, a := range e.Attributes {
			if a.Key == recoilotel.AttemptKey || a.Key == recoilotel.WaitSourceKey {
				fmt.Print(" ", a.Key, "=", a.Value.String())
			}
		}
		fmt.Println()
	}
	// Output:
	// call: <nil>
	// recoil.call.retries: sum 2 over 1 call
	// recoil.call.retry_delay: sum 0.02 s over 1
	// recoil.retry_wait: sum 0.02 s over 2
	// recoil.retry_wait recoil.attempt=1 recoil.wait.source=backoff
	// recoil.retry_wait recoil.attempt=2 recoil.wait.source=backoff
}

func ExampleNewTransport() {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	p := &recoil.Policy{Backoff: backoff.Constant(time.Millisecond)}
	client := &http.Client{Transport: recoilotel.NewTransport(&recoilhttp.Transport{Policy: p}, recoilotel.WithTracerProvider(tp))}

	ctx, parent := tp.Tracer("app").Start(context.Background(), "list models")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/models", nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	parent.End()

	for _, s := range spans.GetSpans()[:3] {
		status, resend := "", "-"
		for _, a := range s.Attributes {
			switch a.Key {
			case recoilotel.StatusCodeKey:
				status = a.Value.String()
			case recoilotel.ResendCountKey:
				resend = a.Value.String()
			}
		}
		fmt.Println(s.Name, s.SpanKind, "status", status, "resend_count", resend, "child of caller:", s.Parent.SpanID() == parent.SpanContext().SpanID())
	}
	// Output:
	// GET client status 502 resend_count - child of caller: true
	// GET client status 502 resend_count 1 child of caller: true
	// GET client status 200 resend_count 2 child of caller: true
}

func ExampleObserver_BreakerHook() {
	reader := sdkmetric.NewManualReader()
	m, _ := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	obs, _ := m.Policy("search")
	b := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 1, OnStateChange: obs.BreakerHook()}))
	p := &recoil.Policy{MaxAttempts: 1, Breaker: b}
	obs.Instrument(p)

	_ = recoil.Do(context.Background(), p, func(context.Context) error { return errors.New("connection refused") })
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, mt := range rm.ScopeMetrics[0].Metrics {
		if g, ok := mt.Data.(metricdata.Gauge[int64]); ok {
			fmt.Println(mt.Name, g.DataPoints[0].Value, "("+b.State().String()+")")
		}
	}
	// Output: recoil.breaker.state 2 (open)
}

// The url.full an attempt span carries keeps the path and the harmless
// query, but not a password or an API key.
func ExampleRedactURL() {
	u, _ := url.Parse("https://svc:hunter2@maps.example.com/geo?q=paris&key=AIza123")
	fmt.Println(recoilotel.RedactURL(u))
	// Output: https://REDACTED:REDACTED@maps.example.com/geo?q=paris&key=REDACTED
}

// Metrics go to the meter provider given, not the global one: here a
// manual reader in a test collects what one call through a policy records.
func ExampleWithMeterProvider() {
	reader := sdkmetric.NewManualReader()
	m, err := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		panic(err)
	}
	obs, err := m.Policy("geocoder")
	if err != nil {
		panic(err)
	}
	p := &recoil.Policy{}
	obs.Instrument(p)
	_ = recoil.Do(context.Background(), p, func(context.Context) error { return nil })

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			names = append(names, mt.Name)
		}
	}
	sort.Strings(names)
	fmt.Println(strings.Join(names, "\n"))
	// Output:
	// recoil.attempts
	// recoil.call.retries
	// recoil.call.retry_delay
	// recoil.stops
}

// The attempt's span context travels in the request's headers, in the
// format of the propagator given (W3C traceparent here), so the server's
// span joins the trace of the attempt that reached it.
func ExampleWithPropagators() {
	traceparent := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traceparent <- r.Header.Get("Traceparent")
	}))
	defer srv.Close()

	tp := sdktrace.NewTracerProvider()
	client := &http.Client{Transport: recoilotel.NewTransport(&recoilhttp.Transport{},
		recoilotel.WithTracerProvider(tp),
		recoilotel.WithPropagators(propagation.TraceContext{}))}

	ctx, parent := tp.Tracer("app").Start(context.Background(), "render invoice")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/rates", nil)
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	parent.End()
	fmt.Println(strings.Contains(<-traceparent, parent.SpanContext().TraceID().String()))
	// Output: true
}

// Spans are made by the tracer provider given: here one that keeps them
// in memory for a test, under recoil's instrumentation scope.
func ExampleWithTracerProvider() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	client := &http.Client{Transport: recoilotel.NewTransport(&recoilhttp.Transport{}, recoilotel.WithTracerProvider(tp))}
	resp, err := client.Get(srv.URL + "/healthz")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	for _, s := range spans.GetSpans() {
		fmt.Println(s.Name, s.SpanKind, s.InstrumentationScope.Name)
	}
	// Output:
	// GET client github.com/recoil-go/recoil
}

// clientStats stands for a *fleet.Client (github.com/recoil-go/recoil/fleet),
// whose Fallbacks method Metrics.Fleet reads.
type clientStats struct{ unreachable, refused atomic.Uint64 }

func (c *clientStats) Fallbacks() (unreachable, refused uint64) {
	return c.unreachable.Load(), c.refused.Load()
}

// The counter's callback reads the fleet client's counts at each
// collection.
func ExampleMetrics_Fleet() {
	reader := sdkmetric.NewManualReader()
	m, _ := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))

	c := &clientStats{} // in a program: c, err := fleet.New(fleet.Config{Redis: rdb, …})
	if err := m.Fleet("main", c); err != nil {
		fmt.Println(err)
		return
	}
	c.refused.Add(3) // Redis answered three calls with an error reply

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, mt := range rm.ScopeMetrics[0].Metrics {
		if s, ok := mt.Data.(metricdata.Sum[int64]); ok {
			for _, p := range s.DataPoints {
				fleet, _ := p.Attributes.Value(recoilotel.FleetKey)
				cause, _ := p.Attributes.Value(recoilotel.CauseKey)
				fmt.Printf("%s{fleet=%s cause=%s} %d\n", mt.Name, fleet.AsString(), cause.AsString(), p.Value)
			}
		}
	}
	fmt.Println(m.Fleet("main", c)) // one name per client
	// Unordered output:
	// recoil.fleet.fallbacks{fleet=main cause=unreachable} 0
	// recoil.fleet.fallbacks{fleet=main cause=refused} 3
	// recoilotel: fleet "main": a fleet client of that name is already exported
}
