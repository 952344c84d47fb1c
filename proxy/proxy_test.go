package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/recoil-go/recoil/tools/policyspec"
)

// provider is a fake model provider that records what reaches it.
type provider struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	reqs []seen
	// answer answers attempt n (from 1).
	answer func(n int64, w http.ResponseWriter, r *http.Request)
}

type seen struct {
	path   string
	header http.Header
	body   string
}

func newProvider(t *testing.T, answer func(n int64, w http.ResponseWriter, r *http.Request)) *provider {
	t.Helper()
	p := &provider{answer: answer}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := p.hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.reqs = append(p.reqs, seen{r.URL.Path, r.Header.Clone(), string(b)})
		p.mu.Unlock()
		p.answer(n, w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *provider) last() seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs[len(p.reqs)-1]
}

func ok(body string) func(int64, http.ResponseWriter, *http.Request) {
	return func(_ int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// status answers code for the first n attempts, then 200.
func status(code int, n int64) func(int64, http.ResponseWriter, *http.Request) {
	return func(i int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n < 0 || i <= n {
			w.WriteHeader(code)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"ok","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}
}

// fast is a policy that waits for nothing between attempts, so tests on
// real sockets take no time.
func fast() *policyspec.Spec {
	none := &policyspec.Backoff{Kind: policyspec.BackoffNone}
	return &policyspec.Spec{Backoff: none, OverloadBackoff: none}
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// start serves a Proxy for cfg and returns its URL.
func start(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer((&Server{Proxy: p}).Handler())
	t.Cleanup(func() { srv.Close(); _ = p.Close() })
	return p, srv.URL
}

// oneRoute is a configuration with one route of protocol proto to up.
func oneRoute(proto, up string, spec *policyspec.Spec) Config {
	base := up + "/v1"
	if proto == Anthropic {
		base = up
	}
	return Config{
		Getenv: env(map[string]string{"KEY": "sk-provider-secret"}),
		Routes: []Route{{Model: Wildcard, Protocol: proto, Policy: spec,
			Targets: []Target{{Name: "up", BaseURL: base, APIKeyEnv: "KEY"}}}},
	}
}

func post(t *testing.T, url string, h map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestForwardsWithProviderCredentials(t *testing.T) {
	for _, tc := range []struct {
		proto, path, clientAuth, clientKey, wantHeader, wantValue, wantPath string
	}{
		{OpenAI, "/v1/chat/completions", "Authorization", "Bearer sk-client", "Authorization", "Bearer sk-provider-secret", "/v1/chat/completions"},
		{OpenAI, "/v1/embeddings", "Authorization", "Bearer sk-client", "Authorization", "Bearer sk-provider-secret", "/v1/embeddings"},
		{Anthropic, "/v1/messages", "X-Api-Key", "sk-client", "X-Api-Key", "sk-provider-secret", "/v1/messages"},
	} {
		t.Run(tc.proto+tc.path, func(t *testing.T) {
			up := newProvider(t, ok(`{"id":"x"}`))
			_, url := start(t, oneRoute(tc.proto, up.URL, nil))
			resp, body := post(t, url+tc.path, map[string]string{tc.clientAuth: tc.clientKey, "Cookie": "session=client"}, `{"model":"m","input":"hi"}`)
			if resp.StatusCode != 200 || body != `{"id":"x"}` {
				t.Fatalf("answer = %d %q, want 200 {\"id\":\"x\"}", resp.StatusCode, body)
			}
			got := up.last()
			if got.path != tc.wantPath {
				t.Errorf("provider path = %q, want %q", got.path, tc.wantPath)
			}
			if v := got.header.Get(tc.wantHeader); v != tc.wantValue {
				t.Errorf("provider %s = %q, want %q", tc.wantHeader, v, tc.wantValue)
			}
			for _, k := range []string{"Cookie", "Authorization", "X-Api-Key"} {
				for _, v := range got.header.Values(k) {
					if strings.Contains(v, "client") {
						t.Errorf("the client's %s reached the provider: %q", k, v)
					}
				}
			}
			if got.body != `{"model":"m","input":"hi"}` {
				t.Errorf("provider body = %q", got.body)
			}
		})
	}
}

func TestRefusesBadBodiesBeforeAnyProvider(t *testing.T) {
	up := newProvider(t, ok(`{}`))
	cfg := oneRoute(OpenAI, up.URL, nil)
	cfg.MaxBody = 64
	_, url := start(t, cfg)
	for _, tc := range []struct {
		name, body string
		chunked    bool
		want       int
	}{
		{"malformed", `{"model":`, false, 400},
		{"not json", `hello`, false, 400},
		{"too large", `{"x":"` + strings.Repeat("a", 100) + `"}`, false, 413},
		{"too large, chunked", `{"x":"` + strings.Repeat("a", 100) + `"}`, true, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // no length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", body)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
			}
			if resp.Header.Get(HeaderShouldRetry) != "false" {
				t.Errorf("x-should-retry = %q, want false", resp.Header.Get(HeaderShouldRetry))
			}
		})
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("provider called %d times, want 0", n)
	}
}

func TestOneRetryLayer(t *testing.T) {
	up := newProvider(t, status(529, -1))
	p, url := start(t, oneRoute(Anthropic, up.URL, fast()))
	const body = `{"model":"claude","max_tokens":10,"messages":[]}`
	resp, _ := post(t, url+"/v1/messages", nil, body)
	if resp.StatusCode != 529 || resp.Header.Get(HeaderShouldRetry) != "false" {
		t.Fatalf("answer = %d, x-should-retry %q; want 529, false", resp.StatusCode, resp.Header.Get(HeaderShouldRetry))
	}
	if n := up.hits.Load(); n != 3 {
		t.Fatalf("provider attempts = %d, want the policy's 3", n)
	}
	// An SDK that retries anyway is charged to the same request: its
	// budget is spent, so the proxy answers it and the provider never
	// sees it.
	for i := 1; i <= 2; i++ {
		resp, _ := post(t, url+"/v1/messages", map[string]string{"X-Stainless-Retry-Count": "1"}, body)
		if resp.StatusCode != 529 || resp.Header.Get(HeaderRefused) != "sdk-retry" {
			t.Errorf("SDK retry %d: %d, Recoil-Refused %q; want 529, sdk-retry", i, resp.StatusCode, resp.Header.Get(HeaderRefused))
		}
	}
	if n := up.hits.Load(); n != 3 {
		t.Errorf("provider attempts after SDK retries = %d, want 3", n)
	}
	if got := p.State().Routes[0].StormRefused; got != 2 {
		t.Errorf("storm refused = %d, want 2", got)
	}
	// A new request (another body) is new demand.
	post(t, url+"/v1/messages", nil, `{"model":"claude","max_tokens":11,"messages":[]}`)
	if n := up.hits.Load(); n <= 3 {
		t.Errorf("a new request was not sent")
	}
}

func TestRetriesThenAnswers(t *testing.T) {
	up := newProvider(t, status(529, 2))
	_, url := start(t, oneRoute(OpenAI, up.URL, fast()))
	resp, body := post(t, url+"/v1/chat/completions", nil, `{"model":"gpt"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"id":"ok"`) {
		t.Fatalf("answer = %d %q, want 200", resp.StatusCode, body)
	}
	if n := up.hits.Load(); n != 3 {
		t.Errorf("provider attempts = %d, want 3", n)
	}
}

func TestRoutesByModelAndFallsBack(t *testing.T) {
	a := newProvider(t, status(529, -1))
	b := newProvider(t, ok(`{"id":"from-b"}`))
	cfg := Config{
		Getenv: env(map[string]string{"KA": "ka-secret", "KB": "kb-secret"}),
		Routes: []Route{{Model: "smart", Aliases: []string{"clever"}, Policy: fast(), Targets: []Target{
			{Name: "a", BaseURL: a.URL + "/v1", APIKeyEnv: "KA", Model: "gpt-a"},
			{Name: "b", BaseURL: b.URL + "/openai/v1", APIKeyEnv: "KB", Model: "gpt-b", Region: "eu"},
		}}},
	}
	p, url := start(t, cfg)
	resp, body := post(t, url+"/v1/chat/completions", nil, `{"model":"clever","messages":[]}`)
	if resp.StatusCode != 200 || body != `{"id":"from-b"}` {
		t.Fatalf("answer = %d %q", resp.StatusCode, body)
	}
	if got := a.last(); got.body != `{"model":"gpt-a","messages":[]}` || got.header.Get("Authorization") != "Bearer ka-secret" {
		t.Errorf("a saw %q with %q", got.body, got.header.Get("Authorization"))
	}
	if got := b.last(); got.body != `{"model":"gpt-b","messages":[]}` || got.path != "/openai/v1/chat/completions" || got.header.Get("Authorization") != "Bearer kb-secret" {
		t.Errorf("b saw %q at %q with %q", got.body, got.path, got.header.Get("Authorization"))
	}
	resp, _ = post(t, url+"/v1/chat/completions", nil, `{"model":"unknown"}`)
	if resp.StatusCode != 404 {
		t.Errorf("unrouted model: %d, want 404", resp.StatusCode)
	}
	st := p.State().Routes[0]
	if st.Targets[0].Cooling <= 0 {
		t.Errorf("target a not cooling after a 529: %+v", st.Targets[0])
	}
}

func TestClientAuthentication(t *testing.T) {
	up := newProvider(t, ok(`{}`))
	cfg := oneRoute(OpenAI, up.URL, nil)
	cfg.Getenv = env(map[string]string{"KEY": "sk-provider-secret", "WEB": "web-token-0123456789abcdef"})
	cfg.Clients = []Client{{Name: "web", TokenEnv: "WEB"}}
	cfg.Listen = "0.0.0.0:0"
	_, url := start(t, cfg)
	for _, tc := range []struct {
		name string
		h    map[string]string
		want int
	}{
		{"none", nil, 401},
		{"wrong", map[string]string{"Authorization": "Bearer nope-nope-nope-nope"}, 401},
		{"bearer", map[string]string{"Authorization": "Bearer web-token-0123456789abcdef"}, 200},
		{"x-api-key", map[string]string{"X-Api-Key": "web-token-0123456789abcdef"}, 200},
	} {
		resp, _ := post(t, url+"/v1/chat/completions", tc.h, `{}`)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if v := up.last().header.Get("Authorization"); v != "Bearer sk-provider-secret" {
		t.Errorf("provider Authorization = %q", v)
	}
}

func TestPublicListenNeedsClients(t *testing.T) {
	for _, tc := range []struct {
		listen   string
		insecure bool
		clients  bool
		ok       bool
	}{
		{"127.0.0.1:0", false, false, true},
		{"[::1]:0", false, false, true},
		{"localhost:0", false, false, true},
		{"0.0.0.0:8787", false, false, false},
		{":8787", false, false, false},
		{"10.0.0.1:8787", true, false, true},
		{"0.0.0.0:8787", false, true, true},
	} {
		cfg := Config{Listen: tc.listen, InsecureNoClientAuth: tc.insecure, Getenv: env(map[string]string{"T": "0123456789abcdef0123"})}
		if tc.clients {
			cfg.Clients = []Client{{Name: "c", TokenEnv: "T"}}
		}
		p, err := New(cfg, Options{})
		if (err == nil) != tc.ok {
			t.Errorf("listen %s insecure %v clients %v: err = %v, want ok %v", tc.listen, tc.insecure, tc.clients, err, tc.ok)
		}
		if p != nil {
			_ = p.Close()
		}
	}
}

func TestProviderSecretsStayOut(t *testing.T) {
	// The provider echoes every header it got; the proxy's answer and its
	// log must hold no provider key.
	up := newProvider(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "provider-session=abc")
		w.WriteHeader(500)
		_ = r.Header.Write(w)
	})
	var log syncBuffer
	cfg := oneRoute(OpenAI, up.URL, fast())
	p, err := New(cfg, Options{Logger: newTestLogger(&log)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, body := post(t, srv.URL+"/v1/chat/completions", nil, `{}`)
	if resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("the provider's cookie reached the client")
	}
	_ = body // the provider's own body is its business: it echoed the key here on purpose
	// The answer reaches the client before the access log line is
	// written; Close waits for the handler, and so for its line.
	srv.Close()
	if strings.Contains(log.String(), "sk-provider-secret") {
		t.Errorf("the provider key reached the log: %s", log.String())
	}
	if !strings.Contains(log.String(), `"attempts":3`) {
		t.Errorf("log line without the summary: %s", log.String())
	}
}

func TestHopBudgetIn(t *testing.T) {
	// A recoil service in front of the proxy sends a budget of 0 retries:
	// the proxy makes one attempt.
	up := newProvider(t, status(503, -1))
	_, url := start(t, oneRoute(OpenAI, up.URL, fast()))
	resp, _ := post(t, url+"/v1/chat/completions", map[string]string{"Recoil-Retry-Budget": "0"}, `{}`)
	if resp.StatusCode != 503 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := up.hits.Load(); n != 1 {
		t.Errorf("provider attempts = %d under a hop budget of 0, want 1", n)
	}
	if v := up.last().header.Get("Recoil-Retry-Budget"); v != "0" {
		t.Errorf("hop budget sent on = %q, want 0", v)
	}
}

func TestHopIn(t *testing.T) {
	// What a recoil service in front of the proxy sends decides the
	// proxy's account and deadline; what comes back says what was spent.
	for _, tc := range []struct {
		name     string
		header   map[string]string
		upstream func(int64, http.ResponseWriter, *http.Request)
		status   int
		hits     int64  // attempts at the provider
		spent    string // Recoil-Retries-Spent in the answer
	}{
		{"no time left", map[string]string{"Recoil-Deadline-Ms": "0"}, ok(`{}`), 504, 0, ""},
		{"time left", map[string]string{"Recoil-Deadline-Ms": "60000"}, ok(`{}`), 200, 1, ""},
		{"retried to success", nil, status(503, 1), 200, 2, "1"},
		{"budget higher than the route's", map[string]string{"Recoil-Retry-Budget": "9"}, status(503, -1), 503, 3, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newProvider(t, tc.upstream)
			_, url := start(t, oneRoute(OpenAI, up.URL, fast()))
			resp, body := post(t, url+"/v1/chat/completions", tc.header, `{}`)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if n := up.hits.Load(); n != tc.hits {
				t.Errorf("provider attempts = %d, want %d", n, tc.hits)
			}
			if v := resp.Header.Get("Recoil-Retries-Spent"); v != tc.spent {
				t.Errorf("Recoil-Retries-Spent = %q, want %q", v, tc.spent)
			}
			if tc.status >= 400 && resp.Header.Get(HeaderShouldRetry) != "false" {
				t.Errorf("a failure answer without %s: false", HeaderShouldRetry)
			}
		})
	}
}
