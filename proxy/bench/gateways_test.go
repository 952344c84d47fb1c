package bench

import (
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp"              // the http app
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy" // its reverse_proxy handler
	"github.com/recoil-go/recoil/proxy"
	"github.com/recoil-go/recoil/proxy/internal/openloop"
)

const (
	body   = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hi."}],"max_tokens":16}`
	answer = `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`
)

// BenchmarkGateways is BenchmarkProxyRate of package proxy with Caddy
// beside the two: the highest rate httputil.ReverseProxy sustains with p99
// under 5 ms, found with an open-loop load at increasing rates, then
// httputil.ReverseProxy, recoil proxy and Caddy's reverse_proxy at that
// rate, round by round, on the same upstream, each with keep-alive
// connections enough for every call in flight. Run it with
//
//	cd proxy/bench && go test -run XXX -bench Gateways -benchtime 1x -v
func BenchmarkGateways(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	b.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)

	rp := httputil.NewSingleHostReverseProxy(u)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 256 // recoil proxy's own
	rp.Transport = t
	rp.ErrorLog = log.New(io.Discard, "", 0)
	bare := httptest.NewServer(rp)
	b.Cleanup(bare.Close)

	p, err := proxy.New(proxy.Config{Routes: []proxy.Route{{Model: proxy.Wildcard, Protocol: proxy.OpenAI,
		Targets: []proxy.Target{{Name: "up", BaseURL: up.URL + "/v1"}}}}}, proxy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	rs := httptest.NewServer(p)
	b.Cleanup(rs.Close)

	caddyURL := startCaddy(b, u.Host)
	servers := []openloop.Server{
		{Name: "httputil.ReverseProxy", Tag: "bare", URL: bare.URL + "/v1/chat/completions"},
		{Name: "recoil proxy", Tag: "recoil", URL: rs.URL + "/v1/chat/completions"},
		{Name: "Caddy reverse_proxy", Tag: "caddy", URL: caddyURL + "/v1/chat/completions"},
	}
	for b.Loop() {
		openloop.Report(b, servers, openloop.PlanFromEnv(body))
	}
}

// startCaddy runs Caddy in the process with one server: reverse_proxy to
// upstream (host:port), keep-alive connections as recoil proxy's, no admin
// endpoint, no automatic HTTPS, logs at ERROR only. It returns the
// server's URL.
func startCaddy(b *testing.B, upstream string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // Caddy listens on it itself
	cfg := map[string]any{
		"admin":   map[string]any{"disabled": true},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{"http": map[string]any{"servers": map[string]any{"bench": map[string]any{
			"listen":          []string{addr},
			"automatic_https": map[string]any{"disable": true},
			"routes": []any{map[string]any{"handle": []any{map[string]any{
				"handler":   "reverse_proxy",
				"upstreams": []any{map[string]any{"dial": upstream}},
				"transport": map[string]any{"protocol": "http",
					"keep_alive": map[string]any{"max_idle_conns": 1024, "max_idle_conns_per_host": 256}},
			}}}},
		}}}},
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := caddy.Load(js, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = caddy.Stop() })
	return "http://" + addr
}
