package load

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/internal/hist"
	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/tally"
)

// serve starts a gateway on loopback for the test.
func serve(t *testing.T, cfg gateway.Config) (*gateway.Gateway, string) {
	t.Helper()
	g, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
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

func preset(t *testing.T, name string) Policy {
	t.Helper()
	p, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A 700 ms payment-gateway outage on real sockets: down from the first
// attempt, four callers who each need one request through. Every caller
// gets through under every preset, and what the callers sent is what the
// gateway counted.
func TestEveryCallerGetsThroughA700msOutage(t *testing.T) {
	for _, name := range policyspec.Presets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g, url := serve(t, gateway.Config{Outages: []gateway.Outage{{Duration: 700 * time.Millisecond}}})
			res, err := Run(context.Background(), Config{
				URL: url + "/v1/messages", Body: []byte(`{"model":"m","max_tokens":1,"messages":[]}`),
				Callers: 4, UntilAccepted: true, Policy: preset(t, name),
				Duration: 20 * time.Second, MaxRequests: 1000, Seed: 4,
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.AllOK || res.Calls != 4 || res.OK != 4 || res.Stopped != "" {
				t.Fatalf("%d of %d callers through, stopped %q; want all 4, not stopped", res.OK, res.Calls, res.Stopped)
			}
			if res.AllOKAt < 700*time.Millisecond {
				t.Errorf("all accepted after %v, before the outage ended", res.AllOKAt)
			}
			if res.Latency.Count != 4 || res.Latency.Max > res.AllOKAt {
				t.Errorf("latency %+v of 4 calls, all ok at %v", res.Latency, res.AllOKAt)
			}
			s := g.Stats()
			if s.Attempts != res.Attempts || s.Accepted != int64(res.Accepted) || res.Accepted != 4 {
				t.Errorf("gateway counted %d attempts, %d accepted; callers sent %d, %d accepted (want 4)", s.Attempts, s.Accepted, res.Attempts, res.Accepted)
			}
			// A logical request an open breaker refused sent no attempt.
			if len(s.Clients) != 4 || int64(len(s.Requests)) > res.Requests || len(s.Requests) < 4 || res.Resubmitted != res.Requests-4 {
				t.Errorf("gateway saw %d clients and %d logical requests; want 4 and 4 to %d", len(s.Clients), len(s.Requests), res.Requests)
			}
			if res.Attempts <= 4 || res.Peak < 4 {
				t.Errorf("%d attempts, peak %d: the outage did not bite", res.Attempts, res.Peak)
			}
			t.Logf("%s: %d attempts, peak %d (gateway %d), all accepted after %v", name, res.Attempts, res.Peak, s.Peak, res.AllOKAt)
		})
	}
}

// A validator's 400 is the same every time. A policy that classifies
// tries it once; one that retries everything tries it until the request's
// deadline: immediate's attempts leave every 20 ms, at 0, 20, …, 180 ms of
// a 200 ms Timeout, and after the tenth the next wait and the least time
// an attempt needs (recoil.DefaultMinAttempt, 10 ms) no longer fit, so the
// policy stops with "deadline".
//
// On the bubble's clock (serveInBubble): on loopback a busy machine makes
// the attempts and the waits late, so fewer fit, and the deadline can
// pass during one ("timeout") — the count and the reason measured the
// scheduler, not the policy.
func TestValidatorCostsWhatThePolicyRetries(t *testing.T) {
	tests := []struct {
		policy       string
		wantAttempts int64
		wantStop     string
	}{
		{PresetDefault, 1, "permanent error"},
		{PresetFullJitter, 1, "permanent error"},
		{PresetImmediate, 10, "deadline"},
	}
	body := []byte(`{"tools":[{"name":"f","input_schema":{"type":"object","strict":true}}]}`)
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g, url, base := serveInBubble(t, gateway.Config{RejectField: "strict"})
				res, err := Run(context.Background(), Config{
					URL: url + "/v1/messages", Body: body, MaxRequests: 1, Base: base,
					Timeout: 200 * time.Millisecond, Policy: preset(t, tt.policy),
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Attempts != tt.wantAttempts || res.Stops[tt.wantStop] != 1 || res.Accepted != 0 || res.Failed != 1 {
					t.Errorf("%d attempts, stops %v, %d accepted, %d failed; want %d, %q, 0, 1", res.Attempts, res.Stops, res.Accepted, res.Failed, tt.wantAttempts, tt.wantStop)
				}
				if s := g.Stats(); s.Attempts != res.Attempts || s.Statuses[400] != uint64(res.Attempts) {
					t.Errorf("gateway: %d attempts, %d 400s; callers sent %d", s.Attempts, s.Statuses[400], res.Attempts)
				}
			})
		})
	}
}

func TestBounds(t *testing.T) {
	down := gateway.Config{Outages: []gateway.Outage{{Duration: time.Hour}}}
	tests := []struct {
		name         string
		gw           gateway.Config
		cfg          Config
		wantStopped  string
		wantRequests int64
	}{
		{"max requests, closed loop", gateway.Config{}, Config{Callers: 3, MaxRequests: 20}, StoppedMaxRequests, 20},
		{"max requests, open loop", gateway.Config{}, Config{Rate: 500, MaxRequests: 30}, StoppedMaxRequests, 30},
		{"duration", down, Config{Callers: 2, UntilAccepted: true, Duration: 300 * time.Millisecond, Policy: Policy{}}, StoppedDuration, -1},
		{"max requests while down", down, Config{Callers: 2, UntilAccepted: true, MaxRequests: 4, Pause: -1}, StoppedMaxRequests, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, url := serve(t, tt.gw)
			cfg := tt.cfg
			cfg.URL = url + "/x"
			if cfg.Policy.Name == "" {
				cfg.Policy = preset(t, PresetImmediate)
				cfg.Policy.Policy.MaxAttempts = 3
			}
			start := time.Now()
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stopped != tt.wantStopped {
				t.Errorf("stopped %q, want %q", res.Stopped, tt.wantStopped)
			}
			if tt.wantRequests >= 0 && res.Requests != tt.wantRequests {
				t.Errorf("%d logical requests, want %d", res.Requests, tt.wantRequests)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("the run took %v", el)
			}
			s := g.Stats()
			switch {
			case tt.wantStopped == StoppedDuration:
				// The run's end cancels the attempts in flight: each caller's
				// last one may have left and never arrived.
				if s.Attempts > res.Attempts || s.Attempts < res.Attempts-int64(cfg.Callers) {
					t.Errorf("gateway counted %d attempts, callers sent %d (at most %d cut off in flight)", s.Attempts, res.Attempts, cfg.Callers)
				}
			case s.Attempts != res.Attempts:
				t.Errorf("gateway counted %d attempts, callers sent %d", s.Attempts, res.Attempts)
			}
		})
	}
}

func TestOpenLoop(t *testing.T) {
	g, url := serve(t, gateway.Config{})
	res, err := Run(context.Background(), Config{URL: url + "/x", Rate: 400, MaxRequests: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != 40 || res.OK != 40 || res.Accepted != 40 || !res.AllOK || res.Callers != 0 || res.Load() != "400/s" {
		t.Errorf("calls %d, ok %d, accepted %d, all ok %v, load %q; want 40, 40, 40, true, 400/s", res.Calls, res.OK, res.Accepted, res.AllOK, res.Load())
	}
	if s := g.Stats(); s.Attempts != 40 || len(s.Clients) != 40 {
		t.Errorf("gateway: %d attempts from %d clients, want 40 from 40 arrivals", s.Attempts, len(s.Clients))
	}
}

func TestRunCanceled(t *testing.T) {
	_, url := serve(t, gateway.Config{Outages: []gateway.Outage{{Duration: time.Hour}}})
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	cfg := Config{URL: url + "/x", Callers: 2, UntilAccepted: true, Policy: preset(t, PresetImmediate),
		Progress: func(p Progress) {
			if p.Attempts > 0 {
				cancel(stop)
			}
		}, ProgressEvery: 10 * time.Millisecond}
	res, err := Run(ctx, cfg)
	if !errors.Is(err, stop) || res == nil || res.Stopped != StoppedCanceled {
		t.Errorf("Run = %v, %v; want the cause and a result stopped %q", res, err, StoppedCanceled)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg   Config
		field string
	}{
		{Config{URL: ""}, "URL"},
		{Config{URL: "ftp://x"}, "URL"},
		{Config{URL: "http://"}, "URL"},
		{Config{URL: "http://x", Method: "GET /"}, "Method"},
		{Config{URL: "http://x", Callers: -1}, "Callers"},
		{Config{URL: "http://x", Callers: MaxCallers + 1}, "Callers"},
		{Config{URL: "http://x", Callers: 2, Rate: 3}, "Rate"},
		{Config{URL: "http://x", Rate: -1}, "Rate"},
		{Config{URL: "http://x", Rate: math.NaN()}, "Rate"},
		{Config{URL: "http://x", Rate: MaxRate + 1}, "Rate"},
		{Config{URL: "http://x", MaxRequests: -1}, "MaxRequests"},
		{Config{URL: "http://x", MaxRequests: MaxLogicalRequests + 1}, "MaxRequests"},
		{Config{URL: "http://x", Duration: -time.Second}, "Duration"},
		{Config{URL: "http://x", Duration: MaxDuration + 1}, "Duration"},
		{Config{URL: "http://x", Timeout: -time.Second}, "Timeout"},
		{Config{URL: "http://x", Timeout: MaxDuration + 1}, "Timeout"},
		{Config{URL: "http://x", Pause: MaxDuration + 1}, "Pause"},
		{Config{URL: "http://x", Window: time.Microsecond}, "Window"},
		{Config{URL: "http://x", Window: -time.Second}, "Window"},
		{Config{URL: "http://x", Window: time.Hour}, "Window"},
		{Config{URL: "http://x", Body: make([]byte, MaxBody+1)}, "Body"},
		{Config{URL: "http://x", Header: http.Header{"Bad Name": {"v"}}}, "Header"},
		{Config{URL: "http://x", Header: http.Header{"X-Ok": {"a\r\nInjected: 1"}}}, "Header"},
		{Config{URL: "http://x", ClientHeader: "X Client"}, "ClientHeader"},
		{Config{URL: "http://x", ProgressEvery: -time.Second}, "ProgressEvery"},
	}
	for _, tt := range tests {
		res, err := Run(context.Background(), tt.cfg)
		var ce *ConfigError
		if res != nil || !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("Run(%+v) = %v, %v; want a *ConfigError for %s", tt.cfg.URL, res, err, tt.field)
		}
	}
	if err := (&Config{URL: "http://x"}).Validate(); err != nil {
		t.Errorf("Validate of a Config with only a URL = %v, want nil (zero fields are defaults)", err)
	}
}

// blockingBase answers no attempt: each waits for its context to end. The
// first attempt calls first.
func blockingBase(first func()) http.RoundTripper {
	var once sync.Once
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		once.Do(first)
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
}

// A run stops at its end — its Duration, its context's cancellation — with
// the most callers, some of them perhaps not yet started, and leaves no
// goroutine behind (TestMain checks). On the bubble's clock, where it is
// exact: nothing the run waits for after its end may be a timer, and a run
// that kept waiting for its callers would deadlock the bubble. On the
// machine's clock the bound would measure how fast a busy machine unwinds
// 10,000 callers under -race, which takes seconds.
func TestRunStopsWhileStartingCallers(t *testing.T) {
	tests := []struct {
		name        string
		duration    time.Duration
		cancel      bool // cancel the context at the first attempt
		before      bool // cancel it before the run
		wantStopped string
	}{
		{"canceled", 0, true, false, StoppedCanceled},
		{"canceled before it starts", 0, false, true, StoppedCanceled},
		{"duration", 50 * time.Millisecond, false, false, StoppedDuration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var ended time.Time
				var mu sync.Mutex
				first := func() {
					if tt.cancel {
						mu.Lock()
						ended = time.Now()
						mu.Unlock()
						cancel()
					}
				}
				start := time.Now()
				if tt.before {
					ended = start
					cancel()
				}
				res, err := Run(ctx, Config{URL: "http://example.invalid/x", Callers: MaxCallers, Duration: tt.duration,
					Base: blockingBase(first), Policy: preset(t, PresetImmediate)})
				if (tt.cancel || tt.before) != (err != nil) {
					t.Errorf("Run = %v", err)
				}
				mu.Lock()
				if ended.IsZero() {
					ended = start.Add(tt.duration)
				}
				mu.Unlock()
				if took := time.Since(ended); took != 0 {
					t.Errorf("the run ended %v after it should have, want at once", took)
				}
				if res == nil || res.Stopped != tt.wantStopped || res.OK != 0 || len(res.TransportErrors) != 0 {
					t.Errorf("result %+v; want stopped %q, nothing ok, no transport error counted (the run's end cut them off)", res, tt.wantStopped)
				}
				if tt.before && res != nil && res.Calls != 0 {
					t.Errorf("%d calls began after the run's context was done", res.Calls)
				}
			})
		})
	}
}

// TestPercentiles: nearest rank, each within 0.8 % of the exact value
// (the histogram's resolution); the count and the maximum exact.
func TestPercentiles(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	many := make([]time.Duration, 1000)
	for i := range many {
		many[i] = time.Duration(i+1) * time.Microsecond
	}
	tests := []struct {
		in   []time.Duration
		want Percentiles
	}{
		{nil, Percentiles{}},
		{ms(5), Percentiles{1, 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}},
		{ms(10, 1, 9, 2, 8, 3, 7, 4, 6, 5), Percentiles{10, 5 * time.Millisecond, 9 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}},
		{many, Percentiles{1000, 500 * time.Microsecond, 900 * time.Microsecond, 990 * time.Microsecond, 1000 * time.Microsecond}},
	}
	near := func(got, want time.Duration) bool { return (got - want).Abs() <= want/125 }
	for _, tt := range tests {
		var h hist.Hist
		for _, d := range tt.in {
			h.Add(d)
		}
		got := percentiles(&h)
		if got.Count != tt.want.Count || got.Max != tt.want.Max ||
			!near(got.P50, tt.want.P50) || !near(got.P90, tt.want.P90) || !near(got.P99, tt.want.P99) {
			t.Errorf("percentiles of %d values = %v, want %v (percentiles within 0.8 %%)", len(tt.in), got, tt.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	ms := time.Millisecond
	rs := []*Result{
		{Policy: "immediate", URL: "http://127.0.0.1:1/v1/messages", Callers: 4, UntilAccepted: true, Seed: 4,
			Calls: 4, OK: 4, Requests: 4, Accepted: 4, Attempts: 64, Window: 200 * ms, Peak: 18,
			AllOK: true, AllOKAt: 708 * ms, Elapsed: 710 * ms,
			Latency: Percentiles{Count: 4, P50: 700 * ms, P90: 708 * ms, P99: 708 * ms, Max: 708 * ms}},
		{Policy: "full-jitter", Calls: 4, OK: 3, Unfinished: 1, Requests: 5, Accepted: 3, Resubmitted: 1, Attempts: 25,
			Window: 200 * ms, Peak: 13, Elapsed: 2 * time.Second,
			Latency: Percentiles{Count: 3, P50: 1150 * ms, P90: 1200 * ms, P99: 1200 * ms, Max: 1200 * ms},
			Stops:   map[string]int{"attempts exhausted": 2}, Statuses: map[int]int64{503: 21, 200: 3, 0: 1}, Stopped: StoppedDuration,
			TransportErrors: map[string]int64{TransportTimeout: 1}, FirstTransportError: "context deadline exceeded"},
	}
	var b strings.Builder
	if err := WriteTable(&b, rs...); err != nil {
		t.Fatal(err)
	}
	want := `http://127.0.0.1:1/v1/messages — 4 callers, until accepted
seed 4 · peak window 200ms · attempts counted at the callers

policy       calls  ok  failed  unfinished  attempts  per call  peak/200ms  p50    p90    p99    max    goodput/s  all ok at
immediate    4      4   0       0           64        16.00     18          700ms  708ms  708ms  708ms  5.63       708ms
full-jitter  4      3   0       1           25        6.25      13          1.15s  1.20s  1.20s  1.20s  1.50       not all
`
	if got := b.String(); got != want {
		t.Errorf("WriteTable =\n%s\nwant\n%s", got, want)
	}
	b.Reset()
	if err := WriteNotes(&b, rs...); err != nil {
		t.Fatal(err)
	}
	want = "immediate: 4 logical requests, 4 accepted\n" +
		"full-jitter: 5 logical requests, 3 accepted, 1 begun again; not accepted: attempts exhausted 2; attempts by status: 200 3, 503 21, no response 1; " +
		"why no response: timeout 1 (first: context deadline exceeded); ended at its -duration, cutting off the 1 unfinished\n"
	if b.String() != want {
		t.Errorf("WriteNotes =\n%s\nwant\n%s", b.String(), want)
	}
}

// The ids the run sends: a client id per caller and a request id per
// logical request, an idempotency key for a POST.
func TestRequestHeaders(t *testing.T) {
	var seen []http.Header
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.Header.Clone())
		return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	})
	_, err := Run(context.Background(), Config{URL: "http://example.invalid/x", Body: []byte("{}"), MaxRequests: 2,
		Base: rt, Header: http.Header{"Authorization": {"Bearer t"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("%d attempts, want 2", len(seen))
	}
	for _, h := range seen {
		id := h.Get(tally.DefaultRequestHeader)
		if h.Get(tally.DefaultClientHeader) != "caller-1" || id == "" || h.Get("Idempotency-Key") != id ||
			h.Get("Authorization") != "Bearer t" || h.Get("Recoil-Attempt") != "1" {
			t.Errorf("headers %v: want caller-1, a request id, the same idempotency key, the caller's own, attempt 1", h)
		}
	}
	if seen[0].Get(tally.DefaultRequestHeader) == seen[1].Get(tally.DefaultRequestHeader) {
		t.Errorf("two logical requests with one id %q", seen[0].Get(tally.DefaultRequestHeader))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Load feeding back into the outage: the gateway recovers only once fewer
// than 20 attempts per 200 ms have arrived for 200 ms. Twenty callers
// retrying every 20 ms (200 attempts a window) keep it down for as long as
// they keep at it; backing off lets it recover, and everyone through.
//
// On the bubble's clock (serveInBubble), through the real Transport, HTTP
// client and gateway: on loopback a busy machine that runs the test's
// process late for a window's length shows the gateway a quiet window that
// the callers never made, and the outage ends under the hammering.
func TestHammeringKeepsARecoveringOutageDown(t *testing.T) {
	tests := []struct {
		policy   string
		duration time.Duration
		wantUp   bool
	}{
		{PresetImmediate, 2 * time.Second, false},
		{PresetFullJitter, 15 * time.Second, true},
		{PresetDefault, 15 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g, url, base := serveInBubble(t, gateway.Config{Outages: []gateway.Outage{{Duration: 700 * time.Millisecond,
					Recovery: gateway.Recovery{Below: 20, For: 200 * time.Millisecond}}}})
				res, err := Run(context.Background(), Config{URL: url + "/x", Callers: 20, UntilAccepted: true, Base: base,
					Policy: preset(t, tt.policy), Duration: tt.duration, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				o := g.Stats().Outages[0]
				if o.Ended != tt.wantUp || res.AllOK != tt.wantUp {
					t.Errorf("outage ended %v (at %v), all through %v (%d of %d); want %v", o.Ended, o.End, res.AllOK, res.OK, res.Calls, tt.wantUp)
				}
				if !tt.wantUp && (res.OK != 0 || res.Stopped != StoppedDuration) {
					t.Errorf("%d callers through while it was down, stopped %q", res.OK, res.Stopped)
				}
				t.Logf("%s: %d attempts, peak %d, outage ended %v at %v, all ok %v at %v", tt.policy, res.Attempts, res.Peak, o.Ended, o.End, res.AllOK, res.AllOKAt)
			})
		})
	}
}

// Each attempt takes 300 ms; the logical request may take 100 ms: it fails
// with "timeout", and its one attempt reached the gateway. On the bubble's
// clock (serveInBubble): on loopback a busy machine can take the 100 ms to
// connect and send, and the gateway never sees the attempt.
func TestTimeoutIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, url, base := serveInBubble(t, gateway.Config{Latency: gateway.Latency{Mean: 300 * time.Millisecond}})
		start := time.Now()
		res, err := Run(context.Background(), Config{URL: url + "/x", MaxRequests: 1, Timeout: 100 * time.Millisecond,
			Base: base, Policy: preset(t, PresetFullJitter)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 1 || res.Unfinished != 0 || res.Stops["timeout"] != 1 || res.Stopped != StoppedMaxRequests {
			t.Errorf("failed %d, unfinished %d, stops %v, stopped %q; want 1, 0, a timeout, %q", res.Failed, res.Unfinished, res.Stops, res.Stopped, StoppedMaxRequests)
		}
		if took := time.Since(start); took != 100*time.Millisecond {
			t.Errorf("the run took %v, want the Timeout, 100ms", took)
		}
		if s := g.Stats(); s.Attempts != 1 {
			t.Errorf("gateway counted %d attempts, want 1", s.Attempts)
		}
	})
}

// With NoIdempotencyKey a POST goes without a key and is retried anyway
// after its connection was lost: the client the charge route's duplicates
// come from.
func TestNoIdempotencyKey(t *testing.T) {
	for _, noKey := range []bool{false, true} {
		var mu sync.Mutex
		var seen []http.Header
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, r.Header.Clone())
			if len(seen) == 1 {
				return nil, io.ErrUnexpectedEOF // sent, and the answer lost
			}
			return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		})
		p, _ := Preset(PresetExponential)
		res, err := Run(context.Background(), Config{URL: "http://example.invalid/v1/charges", Body: []byte("{}"), MaxRequests: 1,
			Base: rt, Policy: p, NoIdempotencyKey: noKey})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || res.Accepted != 1 || res.NoIdempotencyKey != noKey {
			t.Fatalf("NoIdempotencyKey %v: %d attempts, %d accepted, result says %v; want the POST retried once, accepted", noKey, len(seen), res.Accepted, res.NoIdempotencyKey)
		}
		for _, h := range seen {
			if (h.Get("Idempotency-Key") == "") != noKey {
				t.Errorf("NoIdempotencyKey %v: Idempotency-Key %q", noKey, h.Get("Idempotency-Key"))
			}
		}
		if got := strings.Contains(res.Load(), "no idempotency keys"); got != noKey {
			t.Errorf("Load() = %q", res.Load())
		}
	}
}
