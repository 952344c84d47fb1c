package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkProxyWork is each proxy's own work per proxied call, with no
// network under it: the handler — recoil proxy's, or the bare
// httputil.ReverseProxy's — answers one chat completion from a transport
// that returns the upstream's answer at once, into a recorder. What is
// left is what a proxy does on a call's path besides the network: CPU time,
// allocations, goroutines started. It is the figure the wall-clock rate
// benchmark (BenchmarkProxyRate) cannot give on a loaded machine.
func BenchmarkProxyWork(b *testing.B) {
	u, _ := url.Parse("http://upstream.invalid")
	bare := bareProxy(u)
	bare.Transport = cannedAnswer{}
	p, err := New(oneRoute(OpenAI, u.String(), nil), Options{Base: cannedAnswer{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"httputil.ReverseProxy", bare}, {"recoil-proxy", p}, {"recoil-proxy+log+metrics", loggedProxy(b, u.String(), cannedAnswer{})}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			w0 := work()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(benchBody))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer sk-client")
				rec := httptest.NewRecorder()
				tc.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || rec.Body.Len() != len(benchAnswer) {
					b.Fatalf("status %d, %d bytes", rec.Code, rec.Body.Len())
				}
			}
			w0.report(b)
		})
	}
}

// cannedAnswer is a transport whose every answer is benchUpstream's, at
// once: it reads the request's body, as a connection would.
type cannedAnswer struct{}

func (cannedAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(benchAnswer)))
	h.Set("Date", "Thu, 03 Dec 2026 23:00:00 GMT")
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(benchAnswer)),
		ContentLength: int64(len(benchAnswer)), Request: req,
	}, nil
}
