package recoilhttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/limit"
	"github.com/recoil-go/recoil/recoilhttp"
)

// fakeBase is a RoundTripper that answers from a script and records what it
// was sent. Its bodies record whether they were closed.
type fakeBase struct {
	mu     sync.Mutex
	script []func(*http.Request) (*http.Response, error)
	sent   []*http.Request
	bodies []string // request bodies as sent
	at     []time.Time
	resp   []*trackedBody
}

type trackedBody struct {
	io.Reader
	closed bool
}

func (b *trackedBody) Close() error {
	b.closed = true
	if c, ok := b.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (f *fakeBase) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	n := len(f.sent)
	f.sent = append(f.sent, req)
	f.at = append(f.at, time.Now())
	var body string
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		req.Body.Close()
		body = string(b)
	}
	f.bodies = append(f.bodies, body)
	step := f.script[min(n, len(f.script)-1)]
	f.mu.Unlock()
	resp, err := step(req)
	if resp != nil {
		tb := &trackedBody{Reader: resp.Body}
		resp.Body = tb
		resp.Request = req
		f.mu.Lock()
		f.resp = append(f.resp, tb)
		f.mu.Unlock()
	}
	return resp, err
}

func status(code int, body string, headers ...string) func(*http.Request) (*http.Response, error) {
	return func(*http.Request) (*http.Response, error) { return response(code, body, headers...), nil }
}

func failWith(err error) func(*http.Request) (*http.Response, error) {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

var refused = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}

// refuseAll is a breaker that is always open.
type refuseAll struct{}

func (refuseAll) AllowAt(time.Time) bool              { return false }
func (refuseAll) RecordAt(time.Time, breaker.Outcome) {}

const stripeInUse = `{"error":{"type":"idempotency_error","code":"idempotency_key_in_use","message":"There is currently another in-progress request using this Idempotent Key."}}`

func fast() *recoil.Policy {
	return &recoil.Policy{Backoff: backoff.Constant(10 * time.Millisecond), Budget: recoil.NoBudget}
}

func TestTransportRetryRules(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		body     string
		noGet    bool // body without GetBody
		header   string
		allow    bool // AllowRetry on the context
		tr       func(*recoilhttp.Transport)
		script   []func(*http.Request) (*http.Response, error)
		attempts int
		status   int    // status returned, or 0 for an error
		code     string // the last verdict's code
		wantErr  error
	}{
		{"GET 503 retried to the cap", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){status(503, "")}, 3, 503, "", nil},
		{"GET 503 then 200", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){status(503, ""), status(200, "ok")}, 2, 200, "", nil},
		{"GET 400 once", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){status(400, anthropic400)}, 1, 400, "invalid_request_error", nil},
		{"POST 503 not retried", "POST", "{}", false, "", false, nil, []func(*http.Request) (*http.Response, error){status(503, "")}, 1, 503, recoilhttp.CodeNotIdempotent, nil},
		{"POST with a key retried", "POST", "{}", false, "Idempotency-Key: k", false, nil, []func(*http.Request) (*http.Response, error){status(503, "")}, 3, 503, "", nil},
		{"POST opted in per request", "POST", "{}", false, "", true, nil, []func(*http.Request) (*http.Response, error){status(500, "")}, 3, 500, "", nil},
		{"POST opted in per host", "POST", "{}", false, "", false, func(tr *recoilhttp.Transport) {
			tr.RetryNonIdempotent = func(r *http.Request) bool { return r.URL.Host == "api.example.com" }
		}, []func(*http.Request) (*http.Response, error){status(500, "")}, 3, 500, "", nil},
		{"POST with a generated key", "POST", "{}", false, "", false, func(tr *recoilhttp.Transport) { tr.IdempotencyKey = true },
			[]func(*http.Request) (*http.Response, error){status(500, ""), status(200, "")}, 2, 200, "", nil},
		{"POST refused connection retried: nothing was sent", "POST", "{}", false, "", false, nil, []func(*http.Request) (*http.Response, error){failWith(refused)}, 3, 0, recoilhttp.CodeConnect, recoil.ErrAttemptsExhausted},
		{"POST reset after sending not retried", "POST", "{}", false, "", false, nil, []func(*http.Request) (*http.Response, error){failWith(io.ErrUnexpectedEOF)}, 1, 0, recoilhttp.CodeNotIdempotent, recoil.ErrPermanent},
		{"body without GetBody gets one attempt", "PUT", "{}", true, "", false, nil, []func(*http.Request) (*http.Response, error){status(503, "")}, 1, 503, recoilhttp.CodeNotReplayable, nil},
		{"429 quota once", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){status(429, openaiQuota)}, 1, 429, "insufficient_quota", nil},
		{"Retry-After over the cap stops", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){status(429, rateLimited, "Retry-After: 120")}, 1, 429, "rate_limit_error", nil},
		{"SSE error before content retried", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){
			status(200, "event: error\ndata: "+overloaded+"\n\n", "Content-Type: text/event-stream"),
			status(200, "event: message_start\ndata: {}\n\n", "Content-Type: text/event-stream"),
		}, 2, 200, recoilhttp.CodeStreamError, nil},
		{"unnamed data error before content retried (Chat Completions)", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){
			status(200, "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n", "Content-Type: text/event-stream"),
			status(200, "data: {\"id\":\"chatcmpl-1\",\"choices\":[]}\n\n", "Content-Type: text/event-stream"),
		}, 2, 200, recoilhttp.CodeStreamError, nil},
		{"unnamed data with a null error is content", "GET", "", false, "", false, nil, []func(*http.Request) (*http.Response, error){
			status(200, "data: {\"id\":\"chatcmpl-1\",\"error\":null}\n\n", "Content-Type: text/event-stream"),
		}, 1, 200, "", nil},
		{"409 in progress under a generated key retried", "POST", "{}", false, "", false, func(tr *recoilhttp.Transport) { tr.IdempotencyKey = true },
			[]func(*http.Request) (*http.Response, error){status(409, stripeInUse), status(200, "")}, 2, 200, recoilhttp.CodeInProgress, nil},
		{"409 in progress without a key is permanent", "GET", "", false, "", false, nil,
			[]func(*http.Request) (*http.Response, error){status(409, stripeInUse)}, 1, 409, "idempotency_key_in_use", nil},
		{"Policy.Classify is asked first", "GET", "", false, "", false, func(tr *recoilhttp.Transport) {
			tr.Policy.Classify = func(err error) recoil.Verdict {
				var se *recoilhttp.StatusError
				if errors.As(err, &se) && se.StatusCode == 400 {
					return recoil.Verdict{Class: recoil.ClassTransient, Code: "mine", Reason: "flaky validator"}
				}
				return recoil.Verdict{}
			}
		}, []func(*http.Request) (*http.Response, error){status(400, anthropic400), status(200, "")}, 2, 200, "mine", nil},
		{"Policy.Classify cannot make an unsafe POST retry", "POST", "{}", false, "", false, func(tr *recoilhttp.Transport) {
			tr.Policy.Classify = func(error) recoil.Verdict { return recoil.Verdict{Class: recoil.ClassTransient, Reason: "retry"} }
		}, []func(*http.Request) (*http.Response, error){status(503, "")}, 1, 503, recoilhttp.CodeNotIdempotent, nil},
		{"breaker open: refused before sending, body closed", "PUT", "{}", false, "", false, func(tr *recoilhttp.Transport) {
			tr.Policy.Breaker = refuseAll{}
		}, []func(*http.Request) (*http.Response, error){status(200, "")}, 0, 0, "", recoil.ErrCircuitOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &fakeBase{script: tt.script}
				var sum recoilhttp.Summary
				tr := &recoilhttp.Transport{Base: base, Policy: fast(), Observe: func(_ context.Context, s recoilhttp.Summary) { sum = s }}
				if tt.tr != nil {
					tt.tr(tr)
				}
				ctx := t.Context()
				if tt.allow {
					ctx = recoilhttp.AllowRetry(ctx)
				}
				var body io.Reader
				if tt.body != "" {
					body = strings.NewReader(tt.body)
				}
				req, _ := http.NewRequestWithContext(ctx, tt.method, "https://api.example.com/v1/messages", body)
				if tt.noGet {
					req.GetBody = nil
				}
				if tt.header != "" {
					k, v, _ := strings.Cut(tt.header, ": ")
					req.Header.Set(k, v)
				}
				resp, err := tr.RoundTrip(req)
				if len(base.sent) != tt.attempts {
					t.Errorf("attempts = %d, want %d", len(base.sent), tt.attempts)
				}
				if tt.status != 0 {
					if err != nil || resp == nil || resp.StatusCode != tt.status {
						t.Fatalf("RoundTrip() = %v, %v; want status %d and a nil error", resp, err, tt.status)
					}
					resp.Body.Close()
				} else if !errors.Is(err, tt.wantErr) || resp != nil {
					t.Fatalf("RoundTrip() = %v, %v; want %v", resp, err, tt.wantErr)
				}
				if sum.Attempts != tt.attempts || sum.Verdict.Code != tt.code || sum.Method != tt.method || sum.Host != "api.example.com" {
					t.Errorf("Summary = %+v, want %d attempts, code %q", sum, tt.attempts, tt.code)
				}
				// Every attempt sent the whole body, and every discarded
				// response was closed.
				for i, b := range base.bodies {
					if b != tt.body {
						t.Errorf("attempt %d sent body %q, want %q", i+1, b, tt.body)
					}
				}
				for i, rb := range base.resp[:max(len(base.resp)-1, 0)] {
					if !rb.closed {
						t.Errorf("discarded response %d was not closed", i+1)
					}
				}
			})
		})
	}
}

// The caller's request is never modified; the first attempt goes out as it
// is when nothing needs adding, later ones are clones; a generated key is the
// same on every attempt.
func TestTransportLeavesRequestAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){status(500, ""), status(500, ""), status(200, "")}}
		tr := &recoilhttp.Transport{Base: base, Policy: fast()}
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/models", nil)
		req.Header.Set("X-Caller", "yes")
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("RoundTrip() = %v, %v", resp, err)
		}
		if base.sent[0] != req {
			t.Error("first attempt was cloned although nothing changed")
		}
		if base.sent[1] == req || base.sent[2] == req {
			t.Error("a retry sent the caller's request itself")
		}
		if len(req.Header) != 1 || req.Header.Get("X-Caller") != "yes" {
			t.Errorf("caller's headers changed: %v", req.Header)
		}

		base = &fakeBase{script: []func(*http.Request) (*http.Response, error){status(500, ""), status(500, ""), status(200, "")}}
		tr = &recoilhttp.Transport{Base: base, Policy: fast(), IdempotencyKey: true}
		req, _ = http.NewRequestWithContext(t.Context(), "POST", "https://api.example.com/v1/messages", strings.NewReader("{}"))
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		k := base.sent[0].Header.Get("Idempotency-Key")
		if !strings.HasPrefix(k, "recoil-") || base.sent[1].Header.Get("Idempotency-Key") != k || base.sent[2].Header.Get("Idempotency-Key") != k {
			t.Errorf("keys = %q, %q, %q; want one generated key on every attempt", k, base.sent[1].Header.Get("Idempotency-Key"), base.sent[2].Header.Get("Idempotency-Key"))
		}
		if req.Header.Get("Idempotency-Key") != "" {
			t.Error("the caller's request got the generated key")
		}
	})
}

func TestTransportWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){status(529, overloaded, "retry-after: 2"), status(200, "")}}
		tr := &recoilhttp.Transport{Base: base, Policy: fast()}
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/models", nil)
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if d := base.at[1].Sub(base.at[0]); d < 2*time.Second || d > 2200*time.Millisecond {
			t.Errorf("second attempt %v after the first, want the server's 2s (plus at most 10%%)", d)
		}
	})
}

func TestTransportAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){hang, hang, status(200, "ok")}}
		p := fast()
		p.AttemptTimeout = time.Second
		tr := &recoilhttp.Transport{Base: base, Policy: p}
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/models", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("RoundTrip() = %v, %v", resp, err)
		}
		if d, want := time.Since(start), 2*time.Second+20*time.Millisecond; d != want {
			t.Errorf("took %v, want %v (two timed-out attempts and two waits)", d, want)
		}
		// The successful attempt's context stays alive for its body.
		if err := base.sent[2].Context().Err(); err != nil {
			t.Errorf("attempt context = %v before the body was closed", err)
		}
		resp.Body.Close()
		if base.sent[2].Context().Err() == nil {
			t.Error("attempt context still alive after the body was closed")
		}
	})
}

func TestTransportCancelMidWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){status(503, "", "Retry-After: 30")}}
		tr := &recoilhttp.Transport{Base: base, Policy: fast()}
		cause := errors.New("caller left")
		ctx, cancel := context.WithCancelCause(t.Context())
		time.AfterFunc(time.Second, func() { cancel(cause) })
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://api.example.com/v1/models", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if resp != nil || err != cause {
			t.Errorf("RoundTrip() = %v, %v; want nil, the cause", resp, err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("returned after %v, want 1s", d)
		}
		if !base.resp[0].closed {
			t.Error("the discarded 503 was not closed")
		}
	})
}

// An SSE stream that delivers content and then stalls fails with the idle
// error after IdleTimeout; pings do not keep it alive.
func TestTransportIdleStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		done := make(chan struct{})
		defer func() { <-done }() // the writer stops once the reader is gone
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){func(*http.Request) (*http.Response, error) {
			go func() {
				defer close(done)
				pw.Write([]byte("event: message_start\ndata: {}\n\nevent: content_block_delta\ndata: {\"text\":\"Hel\"}\n\n"))
				for range 10 {
					time.Sleep(time.Second)
					if _, err := pw.Write([]byte("event: ping\ndata: {}\n\n")); err != nil {
						return // the reader gave up
					}
				}
			}()
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr}, nil
		}}}
		tr := &recoilhttp.Transport{Base: base, Policy: fast(), IdleTimeout: 3 * time.Second}
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/messages", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, recoilhttp.ErrIdle) {
			t.Fatalf("reading = %v, want the idle error", err)
		}
		var se *recoilhttp.StreamError
		if !errors.As(err, &se) || !bytes.Contains(got, []byte("Hel")) {
			t.Errorf("error %v after %q: want a *StreamError after content", err, got)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("failed after %v, want 3s", d)
		}
		if len(base.sent) != 1 {
			t.Errorf("attempts = %d, want 1: no silent retry after content", len(base.sent))
		}
	})
}

func TestTransportStackedNoteOnce(t *testing.T) {
	var notes []string
	base := &fakeBase{script: []func(*http.Request) (*http.Response, error){status(200, "")}}
	tr := &recoilhttp.Transport{Base: base, Observe: func(_ context.Context, s recoilhttp.Summary) {
		if s.Note != "" {
			notes = append(notes, s.Note)
		}
	}}
	for range 3 {
		req, _ := http.NewRequest("GET", "https://api.example.com/v1/models", nil)
		req.Header.Set("X-Stainless-Retry-Count", "1")
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "attempts multiply") {
		t.Errorf("notes = %q, want one about stacked layers", notes)
	}
}

// ModelAPI retries a generation POST under one generated key, and the one
// log line carries the method, host, status and the provider's own words.
func TestModelAPIAndLogLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){status(529, overloaded), status(400, anthropic400)}}
		var buf bytes.Buffer
		tr := recoilhttp.ModelAPI(base)
		tr.Policy = fast()
		tr.Observe = recoilhttp.SlogObserver(slog.New(slog.NewTextHandler(&buf, nil)))
		req, _ := http.NewRequestWithContext(t.Context(), "POST", "https://api.anthropic.com/v1/messages", strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 400 {
			t.Fatalf("RoundTrip() = %v, %v; want the 400", resp, err)
		}
		resp.Body.Close()
		if len(base.sent) != 2 || base.sent[0].Header.Get("Idempotency-Key") == "" ||
			base.sent[0].Header.Get("Idempotency-Key") != base.sent[1].Header.Get("Idempotency-Key") {
			t.Errorf("attempts %d, keys %q %q; want 2 under one generated key", len(base.sent),
				base.sent[0].Header.Get("Idempotency-Key"), base.sent[len(base.sent)-1].Header.Get("Idempotency-Key"))
		}
		line := buf.String()
		if strings.Count(line, "\n") != 1 {
			t.Fatalf("log = %q, want one line", line)
		}
		for _, want := range []string{"level=WARN", "attempts=2", "method=POST", "host=api.anthropic.com", "status=400", `unknown field \"strict\"`, "reason=\"permanent error\""} {
			if !strings.Contains(line, want) {
				t.Errorf("log line %s lacks %s", line, want)
			}
		}
	})
}

// timedGet sends a GET through tr and fails the test unless it returns
// status with a nil error; it closes the body and says how long it took.
func timedGet(t *testing.T, tr *recoilhttp.Transport, status int) (*http.Response, time.Duration) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/models", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != status {
		t.Fatalf("RoundTrip() = %v, %v; want status %d", resp, err, status)
	}
	resp.Body.Close()
	return resp, time.Since(start)
}

// What a new user found the Transport ignoring, each now honoured: the
// policy's Timeout against a server wait, its AttemptTimeout against a hung
// attempt, and its Limiter across concurrent requests.
func TestTransportHonoursPolicy(t *testing.T) {
	t.Run("Timeout: a Retry-After that cannot fit stops the call in time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &fakeBase{script: []func(*http.Request) (*http.Response, error){status(503, "", "Retry-After: 1")}}
			p := fast()
			p.Timeout = 1500 * time.Millisecond
			resp, d := timedGet(t, &recoilhttp.Transport{Base: base, Policy: p}, 503)
			if d > p.Timeout || len(base.sent) != 2 {
				t.Errorf("%d attempts over %v, want 2 within the 1.5s Timeout", len(base.sent), d)
			}
			if d, ok := recoilhttp.RefusedWait(resp); !ok || d != time.Second {
				t.Errorf("RefusedWait = %v, %v; want 1s", d, ok)
			}
		})
	})
	t.Run("AttemptTimeout cuts a hung first attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			hang := func(r *http.Request) (*http.Response, error) {
				select {
				case <-r.Context().Done():
					return nil, r.Context().Err()
				case <-time.After(2 * time.Second):
					return response(200, "late"), nil
				}
			}
			base := &fakeBase{script: []func(*http.Request) (*http.Response, error){hang, status(200, "ok")}}
			p := fast()
			p.AttemptTimeout = 300 * time.Millisecond
			_, d := timedGet(t, &recoilhttp.Transport{Base: base, Policy: p}, 200)
			if want := 310 * time.Millisecond; d != want {
				t.Errorf("took %v, want %v (a 300ms cut and a 10ms wait)", d, want)
			}
		})
	})
	t.Run("Limiter: one attempt in flight at a time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			inFlight, most := 0, 0
			slow := func(*http.Request) (*http.Response, error) {
				mu.Lock()
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				time.Sleep(100 * time.Millisecond) // the dependency's work, on the bubble's clock
				mu.Lock()
				inFlight--
				mu.Unlock()
				return response(200, "ok"), nil
			}
			base := &fakeBase{script: []func(*http.Request) (*http.Response, error){slow}}
			p := fast()
			p.Limiter = limit.Must(limit.New(limit.Config{Capacity: 1, MaxQueue: 10}))
			tr := &recoilhttp.Transport{Base: base, Policy: p}
			var wg sync.WaitGroup
			for range 5 {
				wg.Go(func() {
					req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/models", nil)
					if resp, err := tr.RoundTrip(req); err != nil {
						t.Error(err)
					} else {
						resp.Body.Close()
					}
				})
			}
			wg.Wait()
			if most != 1 || len(base.sent) != 5 {
				t.Errorf("%d requests sent, at most %d at once; want 5, one at a time", len(base.sent), most)
			}
		})
	})
}

// traceKey carries a trace id in a context, as a tracing library would.
type traceKey struct{}

// traceHandler is a slog handler that writes the trace id it finds in the
// context of each record.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(traceKey{}).(string); ok {
		r.AddAttrs(slog.String("trace", id))
	}
	return h.Handler.Handle(ctx, r)
}

// A refused server wait reaches the log line, and the line carries the
// caller's trace from the request's context.
func TestTransportLogLineRefusedWaitAndTrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(traceHandler{slog.NewTextHandler(&buf, nil)})
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){status(429, rateLimited, "Retry-After: 120")}}
		p := fast()
		p.Observe = recoil.SlogObserver(logger)
		tr := &recoilhttp.Transport{Base: base, Policy: p, Observe: recoilhttp.SlogObserver(logger)}
		ctx := context.WithValue(t.Context(), traceKey{}, "4bf92f35")
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://api.example.com/v1/models", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("logged %d lines, want 2 (the policy's and the Transport's):\n%s", len(lines), buf.String())
		}
		for _, l := range lines {
			for _, want := range []string{"reason=\"server wait too long\"", "refused_wait=2m0s", "trace=4bf92f35"} {
				if !strings.Contains(l, want) {
					t.Errorf("log line %q lacks %s", l, want)
				}
			}
		}
		if d, ok := recoilhttp.RefusedWait(resp); !ok || d != 2*time.Minute {
			t.Errorf("RefusedWait = %v, %v; want 2m0s", d, ok)
		}
	})
}
