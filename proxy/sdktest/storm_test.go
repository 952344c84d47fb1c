package sdktest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/recoil-go/recoil/proxy"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// overloaded is a fake provider answering every call 529 overloaded, as
// Anthropic does when it is at capacity, without a Retry-After: the SDKs
// then wait on their own backoff. It counts the attempts that reach it.
type overloaded struct {
	*httptest.Server
	hits atomic.Int64
}

func newOverloaded(t *testing.T) *overloaded {
	o := &overloaded{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		if strings.HasSuffix(r.URL.Path, "/messages") {
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"error":{"message":"Overloaded","type":"server_error","code":null}}`)
	}))
	t.Cleanup(o.Close)
	return o
}

// gatewayAttempts is how many attempts the stand-in for an LLM gateway
// makes per call: LiteLLM's proxy, Portkey and the like retry each call on
// their own, above the SDK's retries and below the application.
const gatewayAttempts = 3

// retryingGateway is the stand-in: it forwards each call to upstream up to
// gatewayAttempts times while the answer is a 5xx or 429, and answers
// with the last one, headers and all — as a gateway that is one more
// retry layer does.
func retryingGateway(t *testing.T, upstream string) *httptest.Server {
	g := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var resp *http.Response
		for i := 0; i < gatewayAttempts; i++ {
			if resp != nil {
				resp.Body.Close()
			}
			req, _ := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.Path, strings.NewReader(string(body)))
			req.Header = r.Header.Clone()
			var err error
			if resp, err = http.DefaultClient.Do(req); err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			if resp.StatusCode < 500 && resp.StatusCode != 429 {
				break
			}
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(g.Close)
	return g
}

// fastPolicy is recoil's default policy with no waits, so the storms run
// in no time: the bound on attempts is the default's (3).
func fastPolicy() *policyspec.Spec {
	none := &policyspec.Backoff{Kind: policyspec.BackoffNone}
	return &policyspec.Spec{Backoff: none, OverloadBackoff: none}
}

// recorder keeps the headers of every answer the proxy gives, to show
// which of them made the SDK stop.
type recorder struct {
	mu   sync.Mutex
	last http.Header
	n    int
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		rec.mu.Lock()
		rec.last = w.Header().Clone()
		rec.n++
		rec.mu.Unlock()
	})
}

// startProxy serves recoil proxy in front of upstream for both protocols.
func startProxy(t *testing.T, upstream string) (string, *recorder) {
	t.Helper()
	cfg := proxy.Config{
		Getenv: func(k string) string { return map[string]string{"KEY": "sk-provider"}[k] },
		Routes: []proxy.Route{
			{Model: proxy.Wildcard, Protocol: proxy.OpenAI, Policy: fastPolicy(),
				Targets: []proxy.Target{{Name: "openai", BaseURL: upstream + "/v1", APIKeyEnv: "KEY"}}},
			{Model: proxy.Wildcard, Protocol: proxy.Anthropic, Policy: fastPolicy(),
				Targets: []proxy.Target{{Name: "anthropic", BaseURL: upstream, APIKeyEnv: "KEY"}}},
		},
	}
	p, err := proxy.New(cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap((&proxy.Server{Proxy: p}).Handler()))
	t.Cleanup(func() { srv.Close(); _ = p.Close() })
	return srv.URL, rec
}

// shown are the answer headers worth showing.
var shown = []string{"X-Should-Retry", "Recoil-Retries-Spent", "Recoil-Refused"}

func headerLine(h http.Header) string {
	var b strings.Builder
	for _, k := range shown {
		if v := h.Get(k); v != "" {
			fmt.Fprintf(&b, "%s: %s; ", k, v)
		}
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// requireServices reports whether a missing tool fails the test rather
// than skipping it.
func requireServices() bool { return os.Getenv("RECOIL_REQUIRE_SERVICES") == "1" }
