package recoil_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// validationError is a provider's 400: deterministic, the same every time.
type validationError struct{ field string }

func (e *validationError) Error() string {
	return "400 invalid_request_error: unknown field " + e.field
}

// work takes d of (virtual) time, or returns the context's error.
func work(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryEverything is the hand-written wrapper's classifier: anything that
// is not a 2xx.
func retryEverything(error) recoil.Verdict {
	return recoil.Verdict{Class: recoil.ClassTransient, Reason: "not a 2xx"}
}

// A five-attempt wrapper that retries anything that is not a 2xx, its waits
// doubling from one second, holds a
// permanently failing call for 1+2+4+8 = 15 s of sleeping, while the default
// policy makes exactly one attempt.
func TestWrapperAgainstDefault(t *testing.T) {
	wrapper := &recoil.Policy{MaxAttempts: 5, Backoff: backoff.Exponential{Base: time.Second}, Classify: retryEverything, Budget: recoil.NoBudget}
	classify := func(err error) recoil.Verdict {
		var ve *validationError
		if errors.As(err, &ve) {
			return recoil.Verdict{Class: recoil.ClassPermanent, Reason: "validator rejected field " + ve.field}
		}
		return recoil.Verdict{}
	}
	tests := []struct {
		name         string
		p            *recoil.Policy
		wantAttempts int
		wantWaited   time.Duration
		wantReason   error
	}{
		{"five-attempt wrapper", wrapper, 5, 15 * time.Second, recoil.ErrAttemptsExhausted},
		{"recoil default with a classifier", &recoil.Policy{Classify: classify}, 1, 0, recoil.ErrPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				start := time.Now()
				err := recoil.Do(t.Context(), tt.p, func(ctx context.Context) error {
					calls++
					if err := work(ctx, 210*time.Millisecond); err != nil {
						return err
					}
					return &validationError{field: "tools[0].input_schema"}
				})
				held := time.Since(start)
				var re *recoil.Error
				if !errors.As(err, &re) {
					t.Fatalf("Do() = %v, want a *recoil.Error", err)
				}
				if calls != tt.wantAttempts || re.Attempts != tt.wantAttempts {
					t.Errorf("attempts = %d (error says %d), want %d", calls, re.Attempts, tt.wantAttempts)
				}
				if re.Waited != tt.wantWaited {
					t.Errorf("Waited = %v, want %v", re.Waited, tt.wantWaited)
				}
				if want := tt.wantWaited + time.Duration(tt.wantAttempts)*210*time.Millisecond; held != want {
					t.Errorf("held the caller %v, want %v", held, want)
				}
				if !errors.Is(err, tt.wantReason) {
					t.Errorf("errors.Is(%v, %v) = false", err, tt.wantReason)
				}
				var ve *validationError
				if !errors.As(err, &ve) || ve.field != "tools[0].input_schema" {
					t.Errorf("errors.As did not reach the validator's error in %v", err)
				}
			})
		})
	}
}

func TestDoMarkedPermanentIsOneAttempt(t *testing.T) {
	calls := 0
	err := recoil.Do(t.Context(), nil, func(context.Context) error {
		calls++
		return recoil.Permanent(&validationError{field: "x"})
	})
	if calls != 1 || !errors.Is(err, recoil.ErrPermanent) {
		t.Errorf("Do() = %v after %d calls, want ErrPermanent after 1", err, calls)
	}
}

func TestDoDeadlineStopsBeforeWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		p := &recoil.Policy{Backoff: backoff.Constant(4 * time.Second)}
		start := time.Now()
		err := recoil.Do(ctx, p, func(context.Context) error { return errors.New("503") })
		if !errors.Is(err, recoil.ErrDeadline) {
			t.Fatalf("Do() = %v, want ErrDeadline", err)
		}
		var re *recoil.Error
		errors.As(err, &re)
		if re.RefusedWait != 4*time.Second || re.Attempts != 1 {
			t.Errorf("Error = %+v, want Wait 4s after 1 attempt", re)
		}
		if el := time.Since(start); el != 0 {
			t.Errorf("Do() returned after %v, want at once: no wait starts", el)
		}
	})
}

func TestDoRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		wait       time.Duration
		wantErr    error
		wantCalls  int
		wantWaitAt time.Duration // minimum time before the second attempt
	}{
		{"30s over a 10s cap stops with the wait", 30 * time.Second, recoil.ErrWaitTooLong, 1, 0},
		{"2s is honoured, never shortened", 2 * time.Second, nil, 2, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &recoil.Policy{MaxServerWait: 10 * time.Second}
				var calls int
				var second time.Duration
				start := time.Now()
				err := recoil.Do(t.Context(), p, func(context.Context) error {
					calls++
					if calls == 1 {
						return recoil.RetryAfter(errors.New("429 rate_limit_error"), tt.wait)
					}
					second = time.Since(start)
					return nil
				})
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
					t.Fatalf("Do() = %v, want %v", err, tt.wantErr)
				}
				if calls != tt.wantCalls {
					t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
				}
				if tt.wantErr != nil {
					var re *recoil.Error
					if errors.As(err, &re); re.RefusedWait != tt.wait {
						t.Errorf("Error.RefusedWait = %v, want %v", re.RefusedWait, tt.wait)
					}
				}
				if second < tt.wantWaitAt {
					t.Errorf("second attempt after %v, want at least %v", second, tt.wantWaitAt)
				}
			})
		})
	}
}

// Cancellation mid-wait returns context.Cause(ctx) within a millisecond of
// virtual time.
func TestDoCancelMidWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cause := errors.New("user closed the tab")
		ctx, cancel := context.WithCancelCause(t.Context())
		p := &recoil.Policy{Backoff: backoff.Constant(10 * time.Second)}
		var sum recoil.Summary
		p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
		var cancelledAt, returnedAt time.Time
		time.AfterFunc(3*time.Second, func() {
			cancelledAt = time.Now()
			cancel(cause)
		})
		err := recoil.Do(ctx, p, func(context.Context) error { return errors.New("502") })
		returnedAt = time.Now()
		if err != cause {
			t.Errorf("Do() = %v, want context.Cause(ctx) = %v", err, cause)
		}
		if d := returnedAt.Sub(cancelledAt); d > time.Millisecond {
			t.Errorf("returned %v after cancel, want within 1ms", d)
		}
		if sum.Reason != recoil.ReasonCanceled || sum.Attempts != 1 || sum.Err != cause {
			t.Errorf("Summary = %+v, want canceled after 1 attempt", sum)
		}
	})
}

func TestDoTimeouts(t *testing.T) {
	tests := []struct {
		name      string
		p         *recoil.Policy
		wantErr   error
		wantCalls int
		wantTime  time.Duration
	}{
		{"policy Timeout bounds the call", &recoil.Policy{Timeout: time.Second}, recoil.ErrDeadline, 1, time.Second},
		{"AttemptTimeout bounds each attempt", &recoil.Policy{AttemptTimeout: time.Second, Backoff: backoff.None{}}, recoil.ErrAttemptsExhausted, 3, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				start := time.Now()
				err := recoil.Do(t.Context(), tt.p, func(ctx context.Context) error {
					calls++
					return work(ctx, time.Hour)
				})
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Do() = %v, want %v", err, tt.wantErr)
				}
				if calls != tt.wantCalls {
					t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
				}
				if el := time.Since(start); el != tt.wantTime {
					t.Errorf("took %v, want %v", el, tt.wantTime)
				}
				var re *recoil.Error
				if errors.As(err, &re); !re.Verdict.Timeout {
					t.Errorf("Verdict = %v, want a timeout", re.Verdict)
				}
			})
		})
	}
}

func TestGetReturnsFirstSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		got, err := recoil.Get(t.Context(), &recoil.Policy{}, func(context.Context) (string, error) {
			calls++
			if calls < 3 {
				return "", fmt.Errorf("attempt %d: connection reset", calls)
			}
			return "ok", nil
		})
		if got != "ok" || err != nil || calls != 3 {
			t.Errorf("Get() = %q, %v after %d calls, want ok, nil after 3", got, err, calls)
		}
	})
}

func TestErrorIsAndAs(t *testing.T) {
	under := errors.New("underlying")
	for r := recoil.ReasonAttempts; r <= recoil.ReasonLimit; r++ {
		err := error(&recoil.Error{Attempts: 2, Reason: r, Err: fmt.Errorf("wrapped: %w", under)})
		if !errors.Is(err, r.Sentinel()) {
			t.Errorf("errors.Is(%v, %v) = false, want true", err, r.Sentinel())
		}
		for other := recoil.ReasonAttempts; other <= recoil.ReasonLimit; other++ {
			if other != r && errors.Is(err, other.Sentinel()) {
				t.Errorf("errors.Is(%v, %v) = true, want false", err, other.Sentinel())
			}
		}
		if !errors.Is(err, under) {
			t.Errorf("errors.Is(%v, underlying) = false", err)
		}
	}
	got := (&recoil.Error{Attempts: 1, Reason: recoil.ReasonWaitTooLong, RefusedWait: 30 * time.Second, Err: under}).Error()
	if want := "recoil: server wait too long after 1 attempt, refused wait 30s: underlying"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    recoil.Class
		timeout bool
	}{
		{"marked permanent", recoil.Permanent(errors.New("x")), recoil.ClassPermanent, false},
		{"marked deep in a chain", fmt.Errorf("a: %w", fmt.Errorf("b: %w", recoil.Overloaded(errors.New("529")))), recoil.ClassOverloaded, false},
		{"marked inside a join", errors.Join(errors.New("a"), recoil.RetryAfter(errors.New("429"), time.Second)), recoil.ClassThrottled, false},
		{"outermost mark wins", recoil.Permanent(recoil.Transient(errors.New("x"))), recoil.ClassPermanent, false},
		{"cancellation", fmt.Errorf("op: %w", context.Canceled), recoil.ClassCanceled, false},
		{"attempt deadline", context.DeadlineExceeded, recoil.ClassTransient, true},
		{"net timeout", timeoutErr{}, recoil.ClassTransient, true},
		{"unknown", errors.New("?"), recoil.ClassOverloaded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := recoil.Classify(tt.err, recoil.ClassOverloaded)
			if v.Class != tt.want || v.Timeout != tt.timeout {
				t.Errorf("Classify(%v) = %v (timeout %v), want %v (timeout %v)", tt.err, v, v.Timeout, tt.want, tt.timeout)
			}
		})
	}
	if v := recoil.Classify(recoil.RetryAfter(errors.New("429"), -time.Second), 0); v.Wait != 0 {
		t.Errorf("RetryAfter(-1s) wait = %v, want 0", v.Wait)
	}
	if recoil.Permanent(nil) != nil || recoil.Mark(nil, recoil.Verdict{}) != nil {
		t.Error("marking nil returned non-nil")
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

// fakeGuard records what the loop tells a budget and a breaker.
type fakeGuard struct {
	admit, allow bool
	admits       int
	retries      int
	budgetOut    []budget.Outcome
	breakerOut   []breaker.Outcome
}

func (f *fakeGuard) AdmitAt(time.Time) bool                 { f.admits++; return f.admit }
func (f *fakeGuard) RetryAt(time.Time, budget.Cause) bool   { f.retries++; return true }
func (f *fakeGuard) RecordAt(_ time.Time, o budget.Outcome) { f.budgetOut = append(f.budgetOut, o) }

type fakeBreaker struct{ *fakeGuard }

func (f fakeBreaker) AllowAt(time.Time) bool { return f.allow }
func (f fakeBreaker) RecordAt(_ time.Time, o breaker.Outcome) {
	f.breakerOut = append(f.breakerOut, o)
}

type fakeLimiter struct {
	err               error
	acquired, release int
}

func (l *fakeLimiter) TryAcquire() bool {
	if l.err != nil {
		return false
	}
	l.acquired++
	return true
}
func (l *fakeLimiter) Acquire(context.Context) error { l.acquired++; return l.err }
func (l *fakeLimiter) Release()                      { l.release++ }

func TestGuardsWiring(t *testing.T) {
	t.Run("budget and breaker see every outcome", func(t *testing.T) {
		g := &fakeGuard{admit: true, allow: true}
		lim := &fakeLimiter{}
		p := &recoil.Policy{Budget: g, Breaker: fakeBreaker{g}, Limiter: lim, Backoff: backoff.None{}}
		errs := []error{recoil.Overloaded(errors.New("529")), errors.New("reset"), nil}
		i := 0
		if err := recoil.Do(t.Context(), p, func(context.Context) error { i++; return errs[i-1] }); err != nil {
			t.Fatal(err)
		}
		want := []budget.Outcome{{Attempt: 1, Result: budget.Overload}, {Attempt: 2, Result: budget.Failure, After: budget.CauseThrottle}, {Attempt: 3, Result: budget.Success}}
		if fmt.Sprint(g.budgetOut) != fmt.Sprint(want) {
			t.Errorf("budget outcomes = %v, want %v", g.budgetOut, want)
		}
		if want := []breaker.Outcome{breaker.Failure, breaker.Failure, breaker.Success}; fmt.Sprint(g.breakerOut) != fmt.Sprint(want) {
			t.Errorf("breaker outcomes = %v, want %v", g.breakerOut, want)
		}
		if g.admits != 1 || g.retries != 2 || lim.acquired != 3 || lim.release != 3 {
			t.Errorf("admits %d retries %d acquired %d released %d, want 1 2 3 3", g.admits, g.retries, lim.acquired, lim.release)
		}
	})
	tests := []struct {
		name    string
		g       *fakeGuard
		lim     *fakeLimiter
		wantErr error
	}{
		{"budget refuses the call", &fakeGuard{admit: false, allow: true}, &fakeLimiter{}, recoil.ErrBudget},
		{"breaker open", &fakeGuard{admit: true, allow: false}, &fakeLimiter{}, recoil.ErrCircuitOpen},
		{"limiter sheds", &fakeGuard{admit: true, allow: true}, &fakeLimiter{err: errors.New("full")}, recoil.ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recoil.Policy{Budget: tt.g, Breaker: fakeBreaker{tt.g}, Limiter: tt.lim}
			called := false
			err := recoil.Do(t.Context(), p, func(context.Context) error { called = true; return nil })
			if called || !errors.Is(err, tt.wantErr) {
				t.Errorf("Do() = %v, op called %v; want %v without calling op", err, called, tt.wantErr)
			}
			if tt.lim.acquired-tt.lim.release != 0 && tt.lim.err == nil {
				t.Errorf("limiter acquired %d released %d", tt.lim.acquired, tt.lim.release)
			}
			var re *recoil.Error
			if errors.As(err, &re); re.Attempts != 0 {
				t.Errorf("Attempts = %d, want 0", re.Attempts)
			}
		})
	}
}

// Cancelling during a wait reports nothing more to the budget and breaker:
// the failed attempt was already reported, and reporting it again would free
// a half-open probe slot that another call holds. Cancelling while an attempt
// runs reports that attempt as ignored.
func TestAbortReportsOnce(t *testing.T) {
	tests := []struct {
		name        string
		cancelAt    time.Duration // attempts fail at once; waits are 10 s
		wantBreaker []breaker.Outcome
	}{
		{"mid-wait", 3 * time.Second, []breaker.Outcome{breaker.Failure}},
		{"mid-attempt", 12 * time.Second, []breaker.Outcome{breaker.Failure, breaker.Ignored}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := &fakeGuard{admit: true, allow: true}
				p := &recoil.Policy{Budget: g, Breaker: fakeBreaker{g}, Backoff: backoff.Constant(10 * time.Second)}
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(tt.cancelAt, cancel)
				n := 0
				err := recoil.Do(ctx, p, func(ctx context.Context) error {
					n++
					if n == 2 {
						return work(ctx, time.Hour)
					}
					return errors.New("502")
				})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Do() = %v, want context.Canceled", err)
				}
				if fmt.Sprint(g.breakerOut) != fmt.Sprint(tt.wantBreaker) {
					t.Errorf("breaker outcomes = %v, want %v", g.breakerOut, tt.wantBreaker)
				}
				if len(g.budgetOut) != len(tt.wantBreaker) {
					t.Errorf("budget outcomes = %v, want %d", g.budgetOut, len(tt.wantBreaker))
				}
			})
		})
	}
}

// One summary per logical call, with the validator's own words; one
// structured log line from the slog adapter; nothing logged by default.
func TestObserveOncePerCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sums []recoil.Summary
		var events []recoil.AttemptEvent
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		logLine := recoil.SlogObserver(logger)
		p := &recoil.Policy{
			Backoff:   backoff.Constant(time.Second),
			Observe:   func(ctx context.Context, s recoil.Summary) { sums = append(sums, s); logLine(ctx, s) },
			OnAttempt: func(_ context.Context, e recoil.AttemptEvent) { events = append(events, e) },
			Classify: func(err error) recoil.Verdict {
				var ve *validationError
				if errors.As(err, &ve) {
					return recoil.Verdict{Class: recoil.ClassPermanent, Reason: "validator rejected field " + ve.field}
				}
				return recoil.Verdict{}
			},
		}
		n := 0
		err := recoil.Do(t.Context(), p, func(context.Context) error {
			n++
			if n == 1 {
				return errors.New("502 bad gateway")
			}
			return &validationError{field: "tools[0].input_schema"}
		})
		if len(sums) != 1 {
			t.Fatalf("got %d summaries, want 1", len(sums))
		}
		s := sums[0]
		if s.Attempts != 2 || s.Waited != time.Second || s.Reason != recoil.ReasonPermanent || s.Err != err || s.Elapsed != time.Second {
			t.Errorf("Summary = %+v", s)
		}
		if len(events) != 2 || !events[0].Retry || events[1].Retry || events[1].Reason != recoil.ReasonPermanent {
			t.Errorf("attempt events = %+v", events)
		}
		line := buf.String()
		if strings.Count(line, "\n") != 1 {
			t.Fatalf("log = %q, want one line", line)
		}
		for _, want := range []string{"level=WARN", "attempts=2", "waited=1s", `reason="permanent error"`, "class=permanent", "unknown field tools[0].input_schema", "validator rejected field tools[0].input_schema"} {
			if !strings.Contains(line, want) {
				t.Errorf("log line %q lacks %q", line, want)
			}
		}
	})
	// A nil logger writes nothing and does not panic.
	recoil.SlogObserver(nil)(context.Background(), recoil.Summary{Attempts: 1})
}

// A Call driven on a virtual clock makes the same decisions as Do: this is
// how the simulator and the demo run the real policy.
func TestCallOnVirtualClock(t *testing.T) {
	p := &recoil.Policy{MaxAttempts: 5, Backoff: backoff.Exponential{Base: time.Second}, Classify: retryEverything, Budget: recoil.NoBudget}
	now := t0
	c := p.Begin(now, time.Time{})
	var waits []time.Duration
	for {
		if s := c.Next(now); s.Kind != recoil.StepAttempt {
			t.Fatal(s.Err)
		}
		now = now.Add(210 * time.Millisecond)
		err := &validationError{field: "x"}
		s := c.Fail(now, err, p.Verdict(err, recoil.Verdict{}))
		if s.Kind == recoil.StepDone {
			if !errors.Is(s.Err, recoil.ErrAttemptsExhausted) {
				t.Fatalf("Fail() = %v", s.Err)
			}
			break
		}
		waits = append(waits, s.Wait)
		now = now.Add(s.Wait)
	}
	if got, want := fmt.Sprint(waits), "[1s 2s 4s 8s]"; got != want {
		t.Errorf("waits = %v, want %v", got, want)
	}
	if held := now.Sub(t0); held != 16050*time.Millisecond {
		t.Errorf("held %v, want 16.05s (15s sleeping + 5 × 210ms)", held)
	}
}
