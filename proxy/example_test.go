package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/recoil-go/recoil/proxy"
)

// A proxy with one route, in front of a provider that is overloaded: the
// client's single call costs the provider the policy's attempts, and the
// answer tells the SDK not to add its own.
func Example() {
	var attempts atomic.Int64
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		w.WriteHeader(529)
	}))
	defer provider.Close()

	cfg, err := proxy.Parse("proxy.yaml", []byte(`
routes:
  - model: "*"
    protocol: anthropic
    policy: {backoff: none, overload_backoff: none}
    targets: [{name: anthropic, base_url: "`+provider.URL+`"}]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := proxy.New(cfg, proxy.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	front := httptest.NewServer(p)
	defer front.Close()

	resp, err := http.Post(front.URL+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "x-should-retry:", resp.Header.Get("X-Should-Retry"), "attempts:", attempts.Load())
	// Output: 529 x-should-retry: false attempts: 3
}

// A mistake in a configuration names the file, the line and the field.
func ExampleParse() {
	_, err := proxy.Parse("proxy.yaml", []byte("routes:\n  - model: m\n    targets: [{base_url: https://x, key: k}]\n"))
	fmt.Println(err)
	// Output: proxy.yaml:3: routes[0].targets[0].key: unknown field (known: name, base_url, api_key_env, api_key_file, auth_header, model, max_context, region, breaker)
}
