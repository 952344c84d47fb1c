package recoilotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/recoilotel"
)

// server answers with statuses in turn and keeps each request's
// traceparent header.
type server struct {
	*httptest.Server
	mu          sync.Mutex
	statuses    []int
	traceparent []string
}

func newServer(t *testing.T, statuses ...int) *server {
	s := &server{statuses: statuses}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.traceparent)
		s.traceparent = append(s.traceparent, r.Header.Get("Traceparent"))
		s.mu.Unlock()
		w.WriteHeader(s.statuses[min(n, len(s.statuses)-1)])
	}))
	t.Cleanup(s.Close)
	return s
}

func TestAttemptSpans(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int
		hop      bool // call the recoilhttp Transport directly: attempts numbered by its hop header
		wantErr  string
		events   []string  // events on the caller's span
		waits    []float64 // their recoil.wait, in seconds
		reason   string    // the give-up event's recoil.reason
	}{
		{name: "first try", statuses: []int{200}},
		{name: "two retries", statuses: []int{503, 503, 200}, events: []string{"recoil.retry_wait", "recoil.retry_wait"}, waits: []float64{0.002, 0.002}},
		{name: "two retries, hop header", statuses: []int{503, 503, 200}, hop: true, events: []string{"recoil.retry_wait", "recoil.retry_wait"}, waits: []float64{0.002, 0.002}},
		{name: "gives up", statuses: []int{500, 500, 500}, events: []string{"recoil.retry_wait", "recoil.retry_wait", "recoil.give_up"}, waits: []float64{0.001, 0.001}, reason: "attempts exhausted"},
		{name: "permanent", statuses: []int{404}, events: []string{"recoil.give_up"}, reason: "permanent error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.statuses...)
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			m, err := recoilotel.NewMetrics()
			if err != nil {
				t.Fatal(err)
			}
			obs, err := m.Policy("models")
			if err != nil {
				t.Fatal(err)
			}
			p := &recoil.Policy{Backoff: backoff.Constant(time.Millisecond), OverloadBackoff: backoff.Constant(2 * time.Millisecond), Budget: recoil.NoBudget}
			obs.Instrument(p)
			rt := &recoilhttp.Transport{Policy: p, Base: &http.Transport{}, Hop: tt.hop}
			defer rt.Base.(*http.Transport).CloseIdleConnections()
			var client http.Client
			client.Transport = recoilotel.NewTransport(rt, recoilotel.WithTracerProvider(tp), recoilotel.WithPropagators(propagation.TraceContext{}))
			if tt.hop {
				client.Transport = rt
			}

			ctx, parent := tp.Tracer("test").Start(context.Background(), "caller")
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/models?key=secret&x=1", nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			resp.Body.Close()
			parent.End()

			spans := exp.GetSpans()
			if len(spans) != len(tt.statuses)+1 {
				t.Fatalf("%d spans, want %d attempts and the caller's", len(spans), len(tt.statuses))
			}
			caller := spans[len(spans)-1]
			if caller.Name != "caller" {
				t.Fatalf("last span ended = %q, want the caller's", caller.Name)
			}
			u, _ := url.Parse(srv.URL)
			for i, s := range spans[:len(spans)-1] {
				attrs := attribute.NewSet(s.Attributes...)
				if s.Name != "GET" || s.SpanKind != trace.SpanKindClient {
					t.Errorf("attempt %d: span %q kind %v, want GET, client", i+1, s.Name, s.SpanKind)
				}
				if s.Parent.SpanID() != caller.SpanContext.SpanID() || s.SpanContext.TraceID() != caller.SpanContext.TraceID() {
					t.Errorf("attempt %d: parent %v, want the caller's span %v", i+1, s.Parent.SpanID(), caller.SpanContext.SpanID())
				}
				resend, ok := attrs.Value(recoilotel.ResendCountKey)
				if want := i; ok != (want > 0) || ok && resend.AsInt64() != int64(want) {
					t.Errorf("attempt %d: http.request.resend_count = %v (set %v), want %d (set %v)", i+1, resend.AsInt64(), ok, want, want > 0)
				}
				status, _ := attrs.Value(recoilotel.StatusCodeKey)
				if status.AsInt64() != int64(tt.statuses[i]) {
					t.Errorf("attempt %d: status %v, want %d", i+1, status.AsInt64(), tt.statuses[i])
				}
				errType, ok := attrs.Value(recoilotel.ErrorTypeKey)
				if failed := tt.statuses[i] >= 400; ok != failed || failed && errType.AsString() != strconv.Itoa(tt.statuses[i]) {
					t.Errorf("attempt %d: error.type = %q (set %v), want the status for a failure", i+1, errType.AsString(), ok)
				}
				if failed := tt.statuses[i] >= 400; (s.Status.Code == codes.Error) != failed {
					t.Errorf("attempt %d: span status %v, want error %v", i+1, s.Status.Code, failed)
				}
				full, _ := attrs.Value(recoilotel.URLFullKey)
				if want := srv.URL + "/v1/models?key=REDACTED&x=1"; full.AsString() != want {
					t.Errorf("attempt %d: url.full = %q, want %q", i+1, full.AsString(), want)
				}
				host, _ := attrs.Value(recoilotel.ServerAddressKey)
				port, _ := attrs.Value(recoilotel.ServerPortKey)
				if host.AsString() != u.Hostname() || strconv.Itoa(int(port.AsInt64())) != u.Port() {
					t.Errorf("attempt %d: server %s:%d, want %s", i+1, host.AsString(), port.AsInt64(), u.Host)
				}
				if want := "00-" + s.SpanContext.TraceID().String() + "-" + s.SpanContext.SpanID().String() + "-01"; srv.traceparent[i] != want {
					t.Errorf("attempt %d: server saw traceparent %q, want the attempt span's %q", i+1, srv.traceparent[i], want)
				}
			}
			var events []string
			for i, e := range caller.Events {
				ev := attribute.NewSet(e.Attributes...)
				events = append(events, e.Name)
				if e.Name == recoilotel.EventGiveUp {
					if r, _ := ev.Value(recoilotel.ReasonKey); r.AsString() != tt.reason {
						t.Errorf("give-up event: reason %q, want %q", r.AsString(), tt.reason)
					}
				}
				if e.Name != recoilotel.EventRetryWait || i >= len(tt.waits) {
					continue
				}
				n, _ := ev.Value(recoilotel.AttemptKey)
				wait, _ := ev.Value(recoilotel.WaitKey)
				source, _ := ev.Value(recoilotel.WaitSourceKey)
				if n.AsInt64() != int64(i+1) || wait.AsFloat64() != tt.waits[i] || source.AsString() != "backoff" {
					t.Errorf("wait event %d: attempt %d, wait %v s, source %q; want attempt %d, %v s, backoff", i, n.AsInt64(), wait.AsFloat64(), source.AsString(), i+1, tt.waits[i])
				}
			}
			if !slices.Equal(events, tt.events) {
				t.Errorf("caller's span events = %v, want %v", events, tt.events)
			}
		})
	}
}
