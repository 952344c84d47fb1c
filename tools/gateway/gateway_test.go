package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/tally"
)

// mustNew returns New(cfg), failing the test if cfg is not valid.
func mustNew(t testing.TB, cfg Config) *Gateway {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// serve starts g on a loopback port and stops it when the test ends.
func serve(t testing.TB, cfg Config) (*Gateway, string) {
	t.Helper()
	g := mustNew(t, cfg)
	url, stop, err := g.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return g, url
}

// client returns an http.Transport whose connections close when the test
// ends.
func client(t testing.TB) *http.Transport {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// clientCount is what the client side counted: every attempt the retrying
// Transport sent, with the headers it sent it with and the status it got.
type clientCount struct {
	mu       sync.Mutex
	base     http.RoundTripper
	attempts int64
	accepted int64
	clients  map[string]KeyStats
	requests map[string]KeyStats
	numbers  []uint64
}

func newTally(base http.RoundTripper) *clientCount {
	return &clientCount{base: base, clients: map[string]KeyStats{}, requests: map[string]KeyStats{},
		numbers: make([]uint64, hop.HistogramAttempts+1)}
}

func (c *clientCount) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	n, _ := strconv.Atoi(req.Header.Get(hop.HeaderAttempt))
	ok := err == nil && resp.StatusCode == http.StatusOK
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts++
	bump := func(m map[string]KeyStats, key string) {
		e := m[key]
		e.Attempts++
		if ok {
			e.Accepted++
		}
		e.MaxAttempt = max(e.MaxAttempt, n)
		m[key] = e
	}
	if ok {
		c.accepted++
	}
	bump(c.clients, req.Header.Get(tally.DefaultClientHeader))
	bump(c.requests, req.Header.Get(tally.DefaultRequestHeader))
	c.numbers[min(max(n, 1), hop.HistogramAttempts+1)-1]++
	return resp, err
}

// fast is a policy that retries at once, with no budget: the most
// attempts a caller can send.
func fast(attempts int) *recoil.Policy {
	return &recoil.Policy{MaxAttempts: attempts, Backoff: backoff.None{}, OverloadBackoff: backoff.None{}, Budget: recoil.NoBudget}
}

func drain(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Errorf("reading the body: %v", err)
	}
	return b
}

func TestCountsExactUnderConcurrency(t *testing.T) {
	tests := []struct {
		name               string
		cfg                Config
		clients, requests  int
		attempts           int
		wantSomeRetries    bool
		wantAllFirstAccept bool
	}{
		{name: "healthy", cfg: Config{}, clients: 16, requests: 25, attempts: 4, wantAllFirstAccept: true},
		{name: "half fail", cfg: Config{FailureRate: 0.5, Seed: 1}, clients: 16, requests: 40, attempts: 4, wantSomeRetries: true},
		{name: "partial outage of 529s", cfg: Config{Seed: 2, Outages: []Outage{{Duration: time.Hour, Status: 529, Rate: 0.7}}},
			clients: 32, requests: 20, attempts: 12, wantSomeRetries: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, url := serve(t, tt.cfg)
			c := newTally(client(t))
			rt := &recoilhttp.Transport{Base: c, Policy: fast(tt.attempts), Hop: true}
			var wg sync.WaitGroup
			for i := range tt.clients {
				wg.Go(func() {
					for j := range tt.requests {
						req, _ := http.NewRequest(http.MethodGet, url+"/v1/things", nil)
						req.Header.Set(tally.DefaultClientHeader, fmt.Sprintf("client-%d", i))
						req.Header.Set(tally.DefaultRequestHeader, fmt.Sprintf("request-%d-%d", i, j))
						resp, err := rt.RoundTrip(req)
						if err != nil {
							t.Errorf("RoundTrip: %v", err)
							return
						}
						drain(t, resp)
					}
				})
			}
			wg.Wait()

			s := g.Stats()
			if s.Attempts != c.attempts || s.Accepted != c.accepted {
				t.Errorf("gateway counted %d attempts, %d accepted; clients sent %d, %d accepted", s.Attempts, s.Accepted, c.attempts, c.accepted)
			}
			if !mapsEqual(s.Clients, c.clients) {
				t.Errorf("per client: gateway %v, clients %v", s.Clients, c.clients)
			}
			if !mapsEqual(s.Requests, c.requests) {
				t.Errorf("per logical request: gateway and clients differ (%d and %d keys)", len(s.Requests), len(c.requests))
			}
			if !slices.Equal(s.AttemptNumbers, c.numbers) {
				t.Errorf("attempt numbers: gateway %v, clients %v", s.AttemptNumbers, c.numbers)
			}
			if got, want := len(s.Requests), tt.clients*tt.requests; got != want {
				t.Errorf("%d logical requests counted, want %d", got, want)
			}
			var perRequest int
			for n, k := range s.AttemptsPerRequest {
				perRequest += int(n) * k
			}
			if int64(perRequest) != s.Attempts {
				t.Errorf("AttemptsPerRequest adds up to %d attempts, want %d", perRequest, s.Attempts)
			}
			if s.Peak < 1 || s.Peak > s.Attempts {
				t.Errorf("Peak = %d, want within [1, %d]", s.Peak, s.Attempts)
			}
			retries := s.Attempts - int64(tt.clients*tt.requests)
			if tt.wantSomeRetries && retries == 0 {
				t.Errorf("no retries arrived; the fault did not bite")
			}
			if tt.wantAllFirstAccept && (retries != 0 || s.Accepted != s.Attempts) {
				t.Errorf("%d retries, %d of %d accepted; want none, all", retries, s.Accepted, s.Attempts)
			}
		})
	}
}

func mapsEqual(a, b map[string]KeyStats) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// observed keeps the summaries a recoilhttp.Transport reports.
type observed struct {
	mu sync.Mutex
	s  []recoilhttp.Summary
}

func (o *observed) add(_ context.Context, s recoilhttp.Summary) {
	o.mu.Lock()
	o.s = append(o.s, s)
	o.mu.Unlock()
}

func (o *observed) last(t *testing.T) recoilhttp.Summary {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.s) == 0 {
		t.Fatal("no summary reported")
	}
	return o.s[len(o.s)-1]
}

const toolBody = `{"model":"m","max_tokens":10,"tools":[{"name":"f","input_schema":{"type":"object","strict":true}}],"messages":[]}`

func post(t *testing.T, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "key-1") // the Transport may retry a POST that has one
	return req
}

func TestValidatorIsTriedOnce(t *testing.T) {
	g, url := serve(t, Config{RejectField: "strict"})
	var obs observed
	rt := &recoilhttp.Transport{Base: client(t), Policy: fast(5), Hop: true, Observe: obs.add}
	resp, err := rt.RoundTrip(post(t, url+"/v1/messages", toolBody))
	if err != nil {
		t.Fatal(err)
	}
	body := drain(t, resp)
	if got, want := resp.StatusCode, http.StatusBadRequest; got != want {
		t.Fatalf("status %d, want %d", got, want)
	}
	want := `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.input_schema: unknown field \"strict\""}}`
	if string(body) != want {
		t.Errorf("body %s, want %s", body, want)
	}
	s := obs.last(t)
	if s.Attempts != 1 || s.Reason != recoil.ReasonPermanent {
		t.Errorf("client: %d attempts, stopped for %v; want 1, permanent", s.Attempts, s.Reason)
	}
	if got, want := s.Provider, `tools.0.input_schema: unknown field "strict"`; got != want {
		t.Errorf("client: provider message %q, want %q", got, want)
	}
	st := g.Stats()
	if st.Attempts != 1 || st.Faults["validator"] != 1 {
		t.Errorf("gateway: %d attempts, %d by the validator; want 1, 1", st.Attempts, st.Faults["validator"])
	}

	// Without the field the same request is served.
	resp, err = rt.RoundTrip(post(t, url+"/v1/messages", strings.Replace(toolBody, `,"strict":true`, "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	drain(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("without the field: status %d, want 200", resp.StatusCode)
	}
}

func TestAllowanceAnswers429WithRetryAfter(t *testing.T) {
	g, url := serve(t, Config{Allowance: 1})
	var obs observed
	p := fast(5)
	p.MaxServerWait = time.Second // the allowance asks for 60 s: refuse to wait
	rt := &recoilhttp.Transport{Base: client(t), Policy: p, Hop: true, Observe: obs.add}
	get := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/models", nil)
		req.Header.Set(tally.DefaultClientHeader, "c")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	start := time.Now()
	if resp := get(); resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: status %d, want 200", resp.StatusCode)
	} else {
		drain(t, resp)
	}
	resp := get()
	// The bucket refills while the second request is on its way: it waits
	// a minute less the time between the two, which a busy machine can
	// make a second or more.
	between := time.Since(start)
	body := drain(t, resp)
	if got, want := resp.StatusCode, http.StatusTooManyRequests; got != want {
		t.Fatalf("second request: status %d, want %d", got, want)
	}
	least := time.Minute - between
	if got, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || got > 60 || time.Duration(got)*time.Second < least {
		t.Errorf("Retry-After %q, want whole seconds from %v (a minute less the %v between the requests) to 60", resp.Header.Get("Retry-After"), least, between)
	}
	var pe providerError
	if err := json.Unmarshal(body, &pe); err != nil || pe.Error.Type != "rate_limit_error" {
		t.Errorf("body %s: want a rate_limit_error (%v)", body, err)
	}
	s := obs.last(t)
	if s.Attempts != 1 || s.Reason != recoil.ReasonWaitTooLong || s.Verdict.Wait > time.Minute || s.Verdict.Wait < least {
		t.Errorf("client: %d attempts, %v, server wait %v; want 1, %v, %v to 1m0s", s.Attempts, s.Reason, s.Verdict.Wait, recoil.ReasonWaitTooLong, least)
	}
	if st := g.Stats(); st.Attempts != 2 || st.Statuses[429] != 1 {
		t.Errorf("gateway: %d attempts, %d 429s; want 2, 1", st.Attempts, st.Statuses[429])
	}
}

func TestOverloadedSaysShouldRetry(t *testing.T) {
	g, url := serve(t, Config{Outages: []Outage{{Duration: time.Hour, Status: 529}}})
	var obs observed
	rt := &recoilhttp.Transport{Base: client(t), Policy: fast(3), Hop: true, Observe: obs.add}
	resp, err := rt.RoundTrip(post(t, url+"/v1/messages", `{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	body := drain(t, resp)
	if resp.StatusCode != 529 || resp.Header.Get("X-Should-Retry") != "true" {
		t.Errorf("status %d, x-should-retry %q; want 529, true", resp.StatusCode, resp.Header.Get("X-Should-Retry"))
	}
	if want := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`; string(body) != want {
		t.Errorf("body %s, want %s", body, want)
	}
	s := obs.last(t)
	if s.Attempts != 3 || s.Verdict.Class != recoil.ClassOverloaded || s.Reason != recoil.ReasonAttempts {
		t.Errorf("client: %d attempts, class %v, %v; want 3, overloaded, attempts exhausted", s.Attempts, s.Verdict.Class, s.Reason)
	}
	if st := g.Stats(); !slices.Equal(st.AttemptNumbers[:4], []uint64{1, 1, 1, 0}) {
		t.Errorf("gateway attempt numbers %v, want 1, 1, 1, 0, …", st.AttemptNumbers)
	}
}

func TestStream(t *testing.T) {
	streamBody := `{"model":"m","stream":true,"messages":[]}`
	tests := []struct {
		name         string
		stream       Stream
		idle         time.Duration
		path, body   string
		wantAttempts int64
		wantStalls   uint64
		wantEvents   int  // content events read before the end or the failure
		wantIdle     bool // the read fails with ErrIdle
		wantAfter    bool // … after content: a *StreamError
	}{
		{name: "whole", stream: Stream{Events: 3}, idle: time.Second, path: "/v1/messages", body: streamBody,
			wantAttempts: 1, wantEvents: 8},
		{name: "stream path", stream: Stream{Events: 2}, idle: time.Second, path: "/stream",
			wantAttempts: 1, wantEvents: 7},
		{name: "stall after content", stream: Stream{Events: 3, StallRate: 1, StallAfter: 3}, idle: 50 * time.Millisecond,
			path: "/v1/messages", body: streamBody, wantAttempts: 1, wantStalls: 1, wantEvents: 3, wantIdle: true, wantAfter: true},
		{name: "stall before content is retried", stream: Stream{StallRate: 1, StallAfter: 0}, idle: 50 * time.Millisecond,
			path: "/v1/messages", body: streamBody, wantAttempts: 3, wantStalls: 3, wantEvents: 0, wantIdle: true},
		{name: "pings are not content", stream: Stream{Events: 3, StallRate: 1, StallAfter: 2, StallPing: 10 * time.Millisecond},
			idle: 60 * time.Millisecond, path: "/v1/messages", body: streamBody, wantAttempts: 1, wantStalls: 1, wantEvents: 2, wantIdle: true, wantAfter: true},
		{name: "a stall shorter than the idle limit", stream: Stream{Events: 3, StallRate: 1, StallAfter: 2, StallFor: 20 * time.Millisecond},
			idle: time.Second, path: "/v1/messages", body: streamBody, wantAttempts: 1, wantStalls: 1, wantEvents: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, url := serve(t, Config{Stream: tt.stream})
			rt := &recoilhttp.Transport{Base: client(t), Policy: fast(3), Hop: true, IdleTimeout: tt.idle}
			req := post(t, url+tt.path, tt.body)
			if tt.body == "" {
				req, _ = http.NewRequest(http.MethodGet, url+tt.path, nil)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
				t.Errorf("Content-Type %q, want text/event-stream", got)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			var se *recoilhttp.StreamError
			if got := errors.Is(err, recoilhttp.ErrIdle); got != tt.wantIdle {
				t.Errorf("read error %v: idle %v, want %v", err, got, tt.wantIdle)
			}
			if got := errors.As(err, &se); got != tt.wantAfter {
				t.Errorf("read error %v: after content %v, want %v", err, got, tt.wantAfter)
			}
			if got := contentEvents(body); got != tt.wantEvents {
				t.Errorf("%d content events read, want %d:\n%s", got, tt.wantEvents, body)
			}
			st := g.Stats()
			if st.Attempts != tt.wantAttempts || st.Stalls != tt.wantStalls {
				t.Errorf("gateway: %d attempts, %d stalls; want %d, %d", st.Attempts, st.Stalls, tt.wantAttempts, tt.wantStalls)
			}
		})
	}
}

// contentEvents counts the complete events in an SSE body that are not pings.
func contentEvents(body []byte) int {
	n := 0
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		if bytes.HasPrefix(ev, []byte("event: ")) && !bytes.HasPrefix(ev, []byte("event: ping")) {
			n++
		}
	}
	return n
}

func TestLatencyIsServed(t *testing.T) {
	_, url := serve(t, Config{Latency: Latency{Mean: 30 * time.Millisecond}})
	rt := client(t)
	start := time.Now()
	req, _ := http.NewRequest(http.MethodGet, url+"/x", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, resp)
	if got := time.Since(start); got < 30*time.Millisecond {
		t.Errorf("answered after %v, want at least 30ms", got)
	}
}

func TestStatsJSON(t *testing.T) {
	_, url := serve(t, Config{Outages: []Outage{{Duration: time.Hour, Recovery: Recovery{Below: 1, For: time.Second}}}})
	rt := &recoilhttp.Transport{Base: client(t), Policy: fast(2), Hop: true}
	for i := range 3 {
		req, _ := http.NewRequest(http.MethodGet, url+"/x", nil)
		req.Header.Set(tally.DefaultRequestHeader, "r"+strconv.Itoa(i))
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		drain(t, resp)
	}
	resp, err := client(t).RoundTrip(mustGet(t, url+"/stats?requests=1&series=5"))
	if err != nil {
		t.Fatal(err)
	}
	body := drain(t, resp)
	var got struct {
		Attempts       int64                      `json:"attempts"`
		Accepted       int64                      `json:"accepted"`
		WindowMS       float64                    `json:"window_ms"`
		Peak           struct{ Attempts int64 }   `json:"peak"`
		AttemptNumbers []uint64                   `json:"attempt_numbers"`
		Statuses       map[string]uint64          `json:"statuses"`
		Requests       map[string]KeyStats        `json:"requests"`
		PerRequest     map[string]int             `json:"attempts_per_request"`
		LogicalReqs    int                        `json:"logical_requests"`
		Series         []struct{ Attempts int64 } `json:"series"`
		Outages        []struct {
			Active bool     `json:"active"`
			EndMS  *float64 `json:"end_ms"`
		} `json:"outages"`
		Down bool `json:"down"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if got.Attempts != 6 || got.Accepted != 0 || got.WindowMS != 200 || got.Peak.Attempts != 6 {
		t.Errorf("attempts %d, accepted %d, window %vms, peak %d; want 6, 0, 200, 6", got.Attempts, got.Accepted, got.WindowMS, got.Peak.Attempts)
	}
	if !slices.Equal(got.AttemptNumbers[:3], []uint64{3, 3, 0}) || got.Statuses["503"] != 6 {
		t.Errorf("attempt numbers %v, statuses %v; want 3, 3, 0 and 6 503s", got.AttemptNumbers, got.Statuses)
	}
	if len(got.Requests) != 3 || got.Requests["r1"].Attempts != 2 || got.PerRequest["2"] != 3 || got.LogicalReqs != 3 {
		t.Errorf("requests %v, attempts per request %v, %d logical; want 3 of 2 attempts", got.Requests, got.PerRequest, got.LogicalReqs)
	}
	if len(got.Series) == 0 || len(got.Series) > 5 || len(got.Outages) != 1 || !got.Outages[0].Active || got.Outages[0].EndMS != nil || !got.Down {
		t.Errorf("series %v, outages %+v, down %v; want 1 to 5 windows, one active outage with no end yet", got.Series, got.Outages, got.Down)
	}
	if resp, err := client(t).RoundTrip(mustGet(t, url+"/stats?series=x")); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("?series=x: %v, %v; want a 400", resp, err)
	} else {
		drain(t, resp)
	}
}

func mustGet(t testing.TB, url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestMetrics(t *testing.T) {
	_, url := serve(t, Config{RejectField: "strict"})
	rt := &recoilhttp.Transport{Base: client(t), Policy: fast(2), Hop: true}
	for _, body := range []string{toolBody, `{"model":"m"}`} {
		resp, err := rt.RoundTrip(post(t, url+"/v1/messages", body))
		if err != nil {
			t.Fatal(err)
		}
		drain(t, resp)
	}
	resp, err := client(t).RoundTrip(mustGet(t, url+"/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(drain(t, resp))
	for _, want := range []string{
		"recoil_gateway_attempts_total 2",
		"recoil_gateway_accepted_total 1",
		`recoil_gateway_responses_total{code="400",fault="validator"} 1`,
		`recoil_gateway_responses_total{code="200",fault="none"} 1`,
		`recoil_gateway_attempt_number_bucket{le="1"} 2`,
		"recoil_gateway_peak_attempts 2",
		"recoil_gateway_window_seconds 0.2",
		"recoil_gateway_down 0",
		"recoil_gateway_response_duration_seconds_count 2",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", want, text)
		}
	}
	for line := range strings.Lines(text) {
		switch {
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			name, typ := f[2], f[3]
			if typ == "counter" && !strings.HasSuffix(name, "_total") {
				t.Errorf("counter %s does not end in _total", name)
			}
		case strings.HasPrefix(line, "#"):
		case !strings.HasPrefix(line, "recoil_gateway_"):
			t.Errorf("metric outside the recoil_gateway_ prefix: %s", line)
		}
		for _, label := range []string{"url=", "path=", "client=", "key=", "request="} {
			if strings.Contains(line, label) {
				t.Errorf("metric with a %s label: %s", label, line)
			}
		}
	}
}

func TestPageIsSelfContainedAndDoesNotGrade(t *testing.T) {
	_, url := serve(t, Config{})
	resp, err := client(t).RoundTrip(mustGet(t, url+"/"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(drain(t, resp))
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q, want text/html", ct)
	}
	for _, want := range []string{"<svg", "fetch(\"stats", "does not judge", "sliding window"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Nothing fetched from elsewhere: the only URL is the SVG namespace,
	// which names and does not load.
	rest := strings.ReplaceAll(page, `"http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"http://", "https://", "src=", "<link", "@import", "url("} {
		if strings.Contains(rest, bad) {
			t.Errorf("the page refers outside itself: %q", bad)
		}
	}
	// No verdict, no judging colour: a screen that says "healthy" in green
	// can lie.
	lower := strings.ToLower(page)
	for _, bad := range []string{"healthy", "warning", "danger", "good", "bad ", "ok!", "green", "red;", "#166534", "#16a34a", "#dc2626", "#b91c1c"} {
		if strings.Contains(lower, bad) {
			t.Errorf("the page grades: %q", bad)
		}
	}
	// GET / is the page, not an attempt; POST / is an attempt.
	req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader("{}"))
	if resp, err := client(t).RoundTrip(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /: %v, %v", resp, err)
	} else if body := drain(t, resp); !bytes.Equal(body, okBody) {
		t.Errorf("POST / answered %s, want the success body", body)
	}
}
