package recoilotel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/internal/metricdef/metrictest"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/recoilotel"
)

func instrument(b *testing.B, opts ...recoilotel.Option) func(*recoil.Policy) {
	m, err := recoilotel.NewMetrics(opts...)
	if err != nil {
		b.Fatal(err)
	}
	obs, err := m.Policy("bench")
	if err != nil {
		b.Fatal(err)
	}
	return obs.Instrument
}

// BenchmarkOverhead compares Do with the OpenTelemetry metrics attached
// (the SDK's MeterProvider, and the no-op one) to Do with no hooks and with
// empty hooks, in one run.
func BenchmarkOverhead(b *testing.B) {
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	metrictest.Bench(b, map[string]func(*recoil.Policy){
		"0-none":      nil,
		"1-hooks":     metrictest.EmptyHooks,
		"2-otel-noop": instrument(b, recoilotel.WithMeterProvider(noop.NewMeterProvider())),
		"3-otel-sdk":  instrument(b, recoilotel.WithMeterProvider(sdk)),
	})
}

// BenchmarkTransport compares a recoilhttp.Transport over loopback with
// and without attempt spans (the SDK's TracerProvider sampling every span
// with no exporter, and the no-op one): the happy path, and one retry per
// request (the server answers 503 and 200 in turn).
func BenchmarkTransport(b *testing.B) {
	for _, path := range []string{"HappyPath", "OneRetry"} {
		for _, tracer := range []string{"0-none", "1-otel-noop", "2-otel-sdk"} {
			b.Run(path+"/"+tracer, func(b *testing.B) {
				var n atomic.Int64
				retry := path == "OneRetry"
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if retry && n.Add(1)%2 == 1 {
						w.WriteHeader(http.StatusServiceUnavailable)
					}
				}))
				defer srv.Close()
				base := &http.Transport{MaxIdleConnsPerHost: 4}
				defer base.CloseIdleConnections()
				rt := &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{Backoff: backoff.None{}, OverloadBackoff: backoff.None{}, Budget: recoil.NoBudget}}
				var client http.Client
				switch tracer {
				case "0-none":
					client.Transport = rt
				case "1-otel-noop":
					client.Transport = recoilotel.NewTransport(rt, recoilotel.WithTracerProvider(tracenoop.NewTracerProvider()))
				default:
					client.Transport = recoilotel.NewTransport(rt, recoilotel.WithTracerProvider(sdktrace.NewTracerProvider()))
				}
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/v1/models", nil)
				b.ReportAllocs()
				stop := metrictest.ReportCPU(b)
				for b.Loop() {
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
				stop()
			})
		}
	}
}
