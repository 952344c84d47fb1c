package recoilhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
)

// chain is edge → A → B → leaf on loopback, each hop a real net/http server
// whose handler calls the next through a Transport of 3 attempts.
type chain struct {
	leafHits atomic.Int64
	servers  []*httptest.Server
	bases    []*http.Transport
}

func (c *chain) close() {
	for _, s := range c.servers {
		s.Close()
	}
	for _, b := range c.bases {
		b.CloseIdleConnections()
	}
}

func (c *chain) transport(hopOn bool) *recoilhttp.Transport {
	base := &http.Transport{}
	c.bases = append(c.bases, base)
	return &recoilhttp.Transport{
		Base:   base,
		Hop:    hopOn,
		Policy: &recoil.Policy{MaxAttempts: 3, Backoff: backoff.Constant(time.Millisecond), Budget: recoil.NoBudget},
	}
}

// build returns the URL of A. With hopOn, every hop has the Middleware and
// sends the hop headers.
func (c *chain) build(hopOn bool) string {
	leaf := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.leafHits.Add(1)
		http.Error(w, `{"type":"error","error":{"type":"api_error","message":"leaf is down"}}`, http.StatusInternalServerError)
	}))
	c.servers = append(c.servers, leaf)
	next := leaf.URL
	for range 2 { // B, then A
		tr := c.transport(hopOn)
		url := next
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			req, _ := http.NewRequestWithContext(r.Context(), "GET", url, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
		})
		if hopOn {
			h = recoilhttp.NewMiddleware(h, recoilhttp.MiddlewareConfig{})
		}
		s := httptest.NewServer(h)
		c.servers = append(c.servers, s)
		next = s.URL
	}
	return next
}

// Three layers of three attempts put 27 requests on the leaf for
// one edge request; with the hop protocol and an edge budget of 2 retries,
// the whole tree makes at most 3.
func TestChainAmplification(t *testing.T) {
	tests := []struct {
		name    string
		hop     bool
		want    int64
		compare func(got, want int64) bool
	}{
		{"without the hop protocol", false, 27, func(g, w int64) bool { return g == w }},
		{"with an edge budget of 2 retries", true, 3, func(g, w int64) bool { return g <= w }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c chain
			defer c.close()
			a := c.build(tt.hop)
			edge := c.transport(tt.hop)
			edge.EdgeBudget = 2
			req, _ := http.NewRequest("GET", a, nil)
			resp, err := edge.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 500 {
				t.Errorf("edge got %d, want the leaf's 500", resp.StatusCode)
			}
			if got := c.leafHits.Load(); !tt.compare(got, tt.want) {
				t.Errorf("leaf saw %d attempts, want %d", got, tt.want)
			}
			if tt.hop && resp.Header.Get(hop.HeaderSpent) != "2" {
				t.Errorf("%s = %q at the edge, want 2", hop.HeaderSpent, resp.Header.Get(hop.HeaderSpent))
			}
		})
	}
}

func TestMiddleware(t *testing.T) {
	var seen struct {
		deadline time.Duration
		budget   int
	}
	h := recoilhttp.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dl, ok := r.Context().Deadline(); ok {
			seen.deadline = time.Until(dl)
		}
		if a := hop.AccountFrom(r.Context()); a != nil {
			seen.budget = a.Remaining()
			if r.URL.Path == "/spend" {
				a.TrySpend()
				a.Below(3)
			}
		}
		w.Write([]byte("ok"))
	}), recoilhttp.MiddlewareConfig{Budget: 5})
	tests := []struct {
		name       string
		path       string
		headers    map[string]string
		shed       bool
		status     int
		budget     int
		deadlineLE time.Duration
		spent      string
		noRetry    bool
	}{
		{"no headers: own budget, no deadline", "/", nil, false, 200, 5, 0, "", false},
		{"incoming budget lowers it", "/", map[string]string{hop.HeaderBudget: "2"}, false, 200, 2, 0, "", false},
		{"incoming budget cannot raise it", "/", map[string]string{hop.HeaderBudget: "50"}, false, 200, 5, 0, "", false},
		{"hostile budget is ignored", "/", map[string]string{hop.HeaderBudget: "-1"}, false, 200, 5, 0, "", false},
		{"deadline minus the margin", "/", map[string]string{hop.HeaderDeadline: "2000"}, false, 200, 5, 2000*time.Millisecond - hop.DefaultDeadlineMargin, "", false},
		{"spent at and below is reported", "/spend", map[string]string{hop.HeaderBudget: "5"}, false, 200, 5, 0, "4", false},
		{"shedding passes first attempts", "/", map[string]string{hop.HeaderAttempt: "1"}, true, 200, 5, 0, "", false},
		{"shedding refuses retries", "/", map[string]string{hop.HeaderAttempt: "2"}, true, 503, 0, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen.deadline, seen.budget = 0, 0
			h.SetShedding(tt.shed)
			r := httptest.NewRequest("GET", tt.path, nil)
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status || seen.budget != tt.budget {
				t.Errorf("status %d, budget %d; want %d, %d", w.Code, seen.budget, tt.status, tt.budget)
			}
			if tt.deadlineLE != 0 && (seen.deadline > tt.deadlineLE || seen.deadline < tt.deadlineLE-time.Second) {
				t.Errorf("handler deadline in %v, want about %v", seen.deadline, tt.deadlineLE)
			}
			if tt.deadlineLE == 0 && seen.deadline != 0 {
				t.Errorf("handler has a deadline (%v), want none", seen.deadline)
			}
			if got := w.Header().Get(hop.HeaderSpent); got != tt.spent {
				t.Errorf("%s = %q, want %q", hop.HeaderSpent, got, tt.spent)
			}
			if tt.noRetry && (w.Header().Get(hop.HeaderRetry) != "no" || w.Header().Get("X-Should-Retry") != "false") {
				t.Errorf("headers %v, want an explicit do-not-retry", w.Header())
			}
		})
	}
	snap := h.Histogram().Snapshot()
	if snap[0] != 7 || snap[1] != 1 || h.Histogram().Retries() != 1 {
		t.Errorf("histogram = %v, want 7 first attempts and 1 retry", snap)
	}
}

// A Transport that meets a shedding Middleware stops at once.
func TestTransportHonoursShedding(t *testing.T) {
	hits := atomic.Int64{}
	mw := recoilhttp.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(503)
	}), recoilhttp.MiddlewareConfig{})
	mw.SetShedding(true)
	srv := httptest.NewServer(mw)
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	var sum recoilhttp.Summary
	tr := &recoilhttp.Transport{Base: base, Hop: true, Policy: fast(), Observe: func(_ context.Context, s recoilhttp.Summary) { sum = s }}
	req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || hits.Load() != 1 || sum.Attempts != 2 || sum.Verdict.Code != recoilhttp.CodeDoNotRetry {
		t.Errorf("status %d, handler hits %d, summary %+v; want 503 after one retry refused", resp.StatusCode, hits.Load(), sum)
	}
	if got := mw.Histogram().Snapshot(); got[0] != 1 || got[1] != 1 {
		t.Errorf("histogram = %v", got)
	}
}

// A client claims a budget of 9 to an edge whose Middleware does not trust
// it (the default) and whose handler is a reverse proxy: the proxy forwards
// the request's headers to an internal hop that trusts its callers, whose
// handler calls a failing leaf with up to 10 attempts. The edge replaced
// the client's headers with its own figures, so the leaf sees at most
// 1 + the edge's budget of 2. A request with no time left is answered at
// the edge, 504 and no retry, without entering the proxy.
func TestMiddlewareBehindAProxy(t *testing.T) {
	var c chain
	defer c.close()
	var leafHits, proxied atomic.Int64
	leaf := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leafHits.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	c.servers = append(c.servers, leaf)
	tr := c.transport(true)
	tr.Policy.MaxAttempts = 10
	internal := httptest.NewServer(recoilhttp.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "GET", leaf.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
	}), recoilhttp.MiddlewareConfig{TrustIncoming: true}))
	c.servers = append(c.servers, internal)
	target, _ := url.Parse(internal.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxyBase := &http.Transport{}
	c.bases = append(c.bases, proxyBase)
	proxy.Transport = proxyBase
	edge := httptest.NewServer(recoilhttp.NewMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		proxy.ServeHTTP(w, r)
	}), recoilhttp.MiddlewareConfig{Budget: 2}))
	c.servers = append(c.servers, edge)

	send := func(headers ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", edge.URL, nil)
		for i := 0; i < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}

	if resp := send(hop.HeaderBudget, "9", hop.HeaderAttempt, "1"); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("status %d, want the leaf's 500", resp.StatusCode)
	}
	if got := leafHits.Load(); got < 1 || got > 3 {
		t.Errorf("the leaf saw %d attempts, want 1 to 3 (1 + the edge's budget of 2, not the client's 9)", got)
	}
	t.Logf("leaf attempts behind the proxy: %d (edge budget 2, client claimed 9)", leafHits.Load())

	for _, ms := range []string{"0", "3"} {
		before := proxied.Load()
		resp := send(hop.HeaderDeadline, ms)
		if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get(hop.HeaderRetry) != "no" {
			t.Errorf("%s: %s: status %d, %s %q; want 504 and no", hop.HeaderDeadline, ms, resp.StatusCode, hop.HeaderRetry, resp.Header.Get(hop.HeaderRetry))
		}
		if proxied.Load() != before {
			t.Errorf("%s: %s: the handler ran, want it answered at once", hop.HeaderDeadline, ms)
		}
	}
}
