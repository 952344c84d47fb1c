package proxy

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The benchmarks compare recoil proxy with httputil.ReverseProxy — the
// least a Go proxy can do — in the same run, against one loopback upstream,
// so that the difference is the proxy's own cost. docs/benchmarks.md has
// the figures; absolute times on a shared machine are noise, the
// differences and the allocations are what carry over.

const benchBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hi."}],"max_tokens":16}`
const benchAnswer = `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`

func benchUpstream(b *testing.B) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchAnswer)
	}))
	b.Cleanup(up.Close)
	return up
}

func keepAlive() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: t}
}

// BenchmarkProxy sends one chat completion per iteration through each
// proxy in turn and reports the latency quantiles beside ns/op, allocs/op
// and cpu-ns/op (the allocations and CPU time of the whole process:
// client, proxy and upstream; the client and upstream are the same for
// both).
func BenchmarkProxy(b *testing.B) {
	up := benchUpstream(b)
	u, _ := url.Parse(up.URL)
	bare := httptest.NewServer(bareProxy(u)) // recoil proxy's transport and buffer pool
	b.Cleanup(bare.Close)
	p, err := New(oneRoute(OpenAI, up.URL, nil), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	rp := httptest.NewServer(p)
	b.Cleanup(rp.Close)
	logged := httptest.NewServer(loggedProxy(b, up.URL, nil))
	b.Cleanup(logged.Close)
	for _, tc := range []struct{ name, url string }{
		{"direct", up.URL + "/v1/chat/completions"},
		{"httputil.ReverseProxy", bare.URL + "/v1/chat/completions"},
		{"recoil-proxy", rp.URL + "/v1/chat/completions"},
		{"recoil-proxy+log+metrics", logged.URL + "/v1/chat/completions"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := keepAlive()
			lat := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			w0 := work()
			for b.Loop() {
				start := time.Now()
				req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(benchBody))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer sk-client")
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
				lat = append(lat, time.Since(start))
			}
			w0.report(b)
			reportQuantiles(b, lat)
		})
	}
}

// loggedProxy is recoil proxy as the command runs it: an access log line
// per call, written to a file (/dev/null: a write system call per line,
// as to stderr), and Prometheus metrics; base as in Options.
func loggedProxy(b *testing.B, up string, base http.RoundTripper) *Proxy {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(oneRoute(OpenAI, up, nil), Options{Logger: slog.New(slog.NewJSONHandler(f, nil)), Metrics: m, Base: base})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	return p
}

// workDone is what the process has done so far: on a shared machine,
// where wall time is noise, the work a call costs. Client and upstream are
// the same for every proxy, so the difference between two proxies' work
// per call is the proxies' own: CPU time (user and system), goroutines
// started (each a handoff the call waits on) and the threads' context
// switches (each time one blocked or was preempted).
type workDone struct {
	cpu        time.Duration
	goroutines uint64
	switches   int64
}

func work() workDone {
	var w workDone
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		w.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		w.switches = ru.Nvcsw + ru.Nivcsw
	}
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		w.goroutines = s[0].Value.Uint64()
	}
	return w
}

// report reports the work done since w per iteration of b.
func (w workDone) report(b *testing.B) {
	now := work()
	n := float64(b.N)
	b.ReportMetric(float64(now.cpu-w.cpu)/n, "cpu-ns/op")
	b.ReportMetric(float64(now.goroutines-w.goroutines)/n, "goroutines/op")
	b.ReportMetric(float64(now.switches-w.switches)/n, "ctxsw/op")
}

func reportQuantiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// BenchmarkIdleStreams holds RECOIL_PROXY_STREAMS streams (1,000 unless
// set; docs/benchmarks.md reports 10,000) open through the proxy, each
// having delivered one event and then idle, and reports the heap and
// goroutines each costs. Client, proxy and upstream speak HTTP/2 without
// TLS to each other, as an SDK and a provider speak HTTP/2 over TLS, so that
// ten thousand streams need a handful of sockets, not forty thousand.
func BenchmarkIdleStreams(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("RECOIL_PROXY_STREAMS")); err == nil && v > 0 {
		n = v
	}
	release := make(chan struct{})
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	h2c(up.Config)
	up.Start()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	bare := httputil.NewSingleHostReverseProxy(u)
	bare.Transport = h2cTransport()
	p, err := New(oneRoute(OpenAI, up.URL, nil), Options{Base: h2cTransport()})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"httputil.ReverseProxy", bare}, {"recoil-proxy", p}} {
		b.Run(tc.name, func(b *testing.B) {
			ps := httptest.NewUnstartedServer(tc.h)
			h2c(ps.Config)
			ps.Start()
			defer ps.Close()
			client := &http.Client{Transport: h2cTransport()}
			for b.Loop() {
				before := heap()
				g0 := runtime.NumGoroutine()
				bodies := make([]io.ReadCloser, 0, n)
				for range n {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, ps.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
						b.Fatal(err)
					}
					bodies = append(bodies, resp.Body)
				}
				after := heap()
				g1 := runtime.NumGoroutine()
				b.ReportMetric(float64(n), "streams")
				b.ReportMetric(float64(after-before)/float64(n), "heap-B/stream")
				b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/stream")
				close(release)
				for _, body := range bodies {
					_, _ = io.Copy(io.Discard, body)
					body.Close()
				}
				release = make(chan struct{})
			}
		})
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

func h2c(s *http.Server) {
	s.Protocols = new(http.Protocols)
	s.Protocols.SetUnencryptedHTTP2(true)
	s.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1 << 20}
}

func h2cTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = new(http.Protocols)
	t.Protocols.SetUnencryptedHTTP2(true)
	t.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1 << 20}
	return t
}
