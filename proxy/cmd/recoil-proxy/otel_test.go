package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

func TestTracesWanted(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"endpoint, exporter otlp", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"endpoint, exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{"service name alone", map[string]string{"OTEL_SERVICE_NAME": "gw"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tracesWanted(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("tracesWanted = %v, want %v", got, tc.want)
			}
		})
	}
}

// Without the OpenTelemetry variables the command sets up no tracing:
// no provider, and no goroutine left behind by a run.
func TestNoTracingWithoutTheVariables(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(k, "")
	}
	var log bytes.Buffer
	if tr := setupTracing(context.Background(), slog.New(slog.NewTextHandler(&log, nil))); tr != nil {
		t.Fatalf("setupTracing = %+v, want nil", tr)
	}
	if log.Len() > 0 {
		t.Errorf("setupTracing logged %q, want nothing", log.String())
	}
	t.Cleanup(func() { leakcheck.VerifyNone(t) }) // last: after the servers close
	up := flaky(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	runOneCall(t, up.URL, tp)
	if got := up.traceparents(); len(got) != 2 || got[0] != tp || got[1] != tp {
		t.Errorf("the upstream saw traceparent %q, want the client's on both attempts, as before", got)
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set the command exports, on shutdown at
// the latest, one span per attempt in the client's trace.
func TestTracesExported(t *testing.T) {
	t.Cleanup(func() { leakcheck.VerifyNone(t) }) // last: after the servers close
	col := &collector{}
	cs := httptest.NewServer(col)
	t.Cleanup(cs.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", cs.URL)
	t.Setenv("OTEL_SERVICE_NAME", "gw-test")
	up := flaky(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	runOneCall(t, up.URL, "00-"+traceID+"-00f067aa0ba902b7-01")
	spans, services := col.received()
	if len(spans) != 2 {
		t.Fatalf("the collector received %d spans, want 2 (one per attempt)", len(spans))
	}
	for i, s := range spans {
		if got := hex.EncodeToString(s.TraceId); got != traceID {
			t.Errorf("span %d: trace %s, want the client's %s", i, got, traceID)
		}
		if got := hex.EncodeToString(s.ParentSpanId); got != "00f067aa0ba902b7" {
			t.Errorf("span %d: parent %s, want the client's span", i, got)
		}
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || s.Name != "POST" {
			t.Errorf("span %d: %v %q, want a CLIENT span named POST", i, s.Kind, s.Name)
		}
	}
	var statuses []string
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if kv.Key == "http.response.status_code" {
				statuses = append(statuses, strconv.FormatInt(kv.Value.GetIntValue(), 10))
			}
		}
	}
	if sort.Strings(statuses); strings.Join(statuses, ",") != "200,503" {
		t.Errorf("the attempts' status codes %v, want 200 and 503", statuses)
	}
	if strings.Join(services, ",") != "gw-test" {
		t.Errorf("service.name %v, want gw-test", services)
	}
	if got := up.traceparents(); len(got) != 2 || got[0] == got[1] || !strings.Contains(got[0], traceID) {
		t.Errorf("the upstream saw traceparent %q, want each attempt's own span in the client's trace", got)
	}
}

// A collector that cannot be reached, or an endpoint that does not parse,
// is a warning: the proxy serves all the same.
func TestBadEndpointStillServes(t *testing.T) {
	for _, tc := range []struct{ name, endpoint string }{
		{"refused", "http://127.0.0.1:1"},
		{"malformed", "http://[::1"},
		{"no scheme", "127.0.0.1:4318"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200") // ms: the refused export gives up soon
			up := flaky(t)
			log := runOneCall(t, up.URL, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			if !strings.Contains(log, `"level":"WARN"`) || !strings.Contains(log, "OpenTelemetry") {
				t.Errorf("no warning logged:\n%s", log)
			}
		})
	}
}

// runOneCall runs the command against the upstream at upURL, makes one
// call with the traceparent header given (none if empty), checks it
// succeeds after the upstream's one failure, stops the command, and
// returns what it logged.
func runOneCall(t *testing.T, upURL, traceparent string) string {
	t.Helper()
	t.Setenv("OPENAI_BASE_URL", upURL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var stderr syncBuffer
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-quiet"}, io.Discard, &stderr, nil, ready)
	}()
	addr := <-ready
	req, err := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if traceparent != "" {
		req.Header.Set("Traceparent", traceparent)
	}
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	if resp.StatusCode != 200 {
		t.Errorf("the call = %d %s, want 200", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run = %v", err)
	}
	return stderr.String()
}

// upstream is a provider that fails its first call with 503 and answers
// the next; it keeps the traceparent header of each.
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	seen  []string
	calls atomic.Int32
}

func flaky(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		u.seen = append(u.seen, r.Header.Get("Traceparent"))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if u.calls.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) traceparents() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// collector is a fake OTLP/HTTP trace collector: it keeps the spans of
// each POST /v1/traces and the service.name of their resources.
type collector struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	b, err := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				c.services = append(c.services, kv.Value.GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *collector) received() ([]*tracepb.Span, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spans, c.services
}
