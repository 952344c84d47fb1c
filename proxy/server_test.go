package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/recoil-go/recoil/recoilhttp"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerEndpoints(t *testing.T) {
	up := newProvider(t, status(529, -1))
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(oneRoute(OpenAI, up.URL, fast()), Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := &Server{Proxy: p, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	post(t, url+"/v1/chat/completions", nil, `{"model":"m"}`)
	post(t, url+"/v1/chat/completions", map[string]string{"X-Stainless-Retry-Count": "1"}, `{"model":"m"}`)
	for _, tc := range []struct{ path, want string }{
		{"/healthz", "ok"},
		{"/readyz", "ready"},
		{"/recoil/", "recoil proxy"},
		{"/recoil/state", `"storm_refused":1`},
		{"/metrics", `recoil_proxy_refused_total{route="openai.any",why="sdk-retry"} 1`},
		{"/metrics", `recoil_proxy_calls_total{route="openai.any",status="5xx"} 2`},
		{"/metrics", `recoil_attempts_total{outcome="overloaded",policy="openai.any"} 3`},
	} {
		code, body := get(t, url+tc.path)
		if code != 200 || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s = %d, want 200 with %q in:\n%.2000s", tc.path, code, tc.want, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestShutdownDrainsStreams starts a stream, asks the server to stop, and
// checks that the stream still ends whole while new connections are
// refused.
func TestShutdownDrainsStreams(t *testing.T) {
	release := make(chan struct{})
	up := newProvider(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, `{"i":1}`)
		<-release
		sse(w, "[DONE]")
	})
	p, err := New(oneRoute(OpenAI, up.URL, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := &Server{Proxy: p}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	rctx, rcancel := context.WithTimeout(context.Background(), guard)
	defer rcancel()
	resp := streamReq(t, rctx, url)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := readEvent(br); err != nil {
		t.Fatal(err)
	}
	cancel() // shut down with the stream open
	for !s.draining.Load() {
		runtime.Gosched() // wait for Serve to see it: a state, not a time
	}
	close(release)
	if d, err := readEvent(br); err != nil || d != "[DONE]" {
		t.Fatalf("the open stream ended with %q, %v: shutdown must drain it", d, err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestReloadKeepsLearnedState(t *testing.T) {
	up := newProvider(t, status(529, -1))
	cfg := oneRoute(OpenAI, up.URL, fast())
	p, url := start(t, cfg)
	post(t, url+"/v1/chat/completions", nil, `{"model":"m"}`)
	before := p.State().Routes[0]
	if before.Targets[0].Cooling <= 0 {
		t.Fatalf("the target is not cooling after a 529: %+v", before)
	}
	if err := p.Reload(oneRoute(OpenAI, up.URL, fast())); err != nil {
		t.Fatal(err)
	}
	after := p.State().Routes[0]
	if after.Calls != before.Calls || after.Targets[0].Cooling <= 0 {
		t.Errorf("after a reload of the same route: %+v, want %+v (still cooling)", after, before)
	}
	changed := oneRoute(OpenAI, up.URL, fast())
	changed.Routes[0].Cooldown = time.Minute
	if err := p.Reload(changed); err != nil {
		t.Fatal(err)
	}
	if got := p.State().Routes[0]; got.Calls != 0 || got.Targets[0].Cooling != 0 {
		t.Errorf("a changed route kept its state: %+v", got)
	}
	moved := oneRoute(OpenAI, up.URL, fast())
	moved.Listen = "127.0.0.1:1"
	if err := p.Reload(moved); err == nil {
		t.Error("a reload that moves the listener was accepted")
	}
}

func TestTraceWrapsEachRoute(t *testing.T) {
	up := newProvider(t, ok(`{}`))
	var wrapped, sent atomic.Int64
	p, err := New(oneRoute(OpenAI, up.URL, nil), Options{Trace: func(tr *recoilhttp.Transport) http.RoundTripper {
		wrapped.Add(1)
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return tr.RoundTrip(r)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	post(t, srv.URL+"/v1/chat/completions", nil, `{}`)
	if wrapped.Load() != 1 || sent.Load() != 1 {
		t.Errorf("Trace wrapped %d routes and saw %d calls, want 1 and 1", wrapped.Load(), sent.Load())
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
