package recoil_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/limit"
)

// latencyLog is a fake LatencyLimiter, LatencyBreaker and PriorityLimiter
// that writes down what the loop tells it.
type latencyLog struct {
	mu    sync.Mutex
	lines []string
	free  int  // slots left; every TryAcquire takes one
	never bool // TryAcquire always fails
}

var outcomes = map[breaker.Outcome]string{breaker.Success: "success", breaker.Failure: "failure", breaker.Ignored: "ignored"}

func (l *latencyLog) log(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *latencyLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, " ")
}

func (l *latencyLog) TryAcquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.free == 0 || l.never {
		return false
	}
	l.free--
	return true
}
func (l *latencyLog) Acquire(context.Context) error { l.TryAcquire(); return nil }
func (l *latencyLog) Release() {
	l.mu.Lock()
	l.free++
	l.mu.Unlock()
	l.log("release")
}
func (l *latencyLog) ReleaseAt(_ time.Time, lat time.Duration, overload bool) {
	l.mu.Lock()
	l.free++
	l.mu.Unlock()
	l.log("release(%v,%v)", lat, overload)
}

// plainLimiter is latencyLog as a Limiter only.
type plainLimiter struct{ *latencyLog }

func (l plainLimiter) ReleaseAt() {} // not the interface's method

// priorityLog is latencyLog as a PriorityLimiter.
type priorityLog struct{ *latencyLog }

func (l priorityLog) TryAcquireAs(p recoil.Priority, retry bool) bool {
	l.log("try(%v,%v)", p, retry)
	return l.latencyLog.TryAcquire()
}
func (l priorityLog) AcquireAs(_ context.Context, p recoil.Priority, retry bool) error {
	l.log("acquire(%v,%v)", p, retry)
	return nil
}

func (l *latencyLog) AllowAt(time.Time) bool { return true }
func (l *latencyLog) RecordAt(_ time.Time, o breaker.Outcome) {
	l.log("record(%s)", outcomes[o])
}
func (l *latencyLog) RecordLatencyAt(_ time.Time, o breaker.Outcome, lat time.Duration) {
	l.log("record(%s,%v)", outcomes[o], lat)
}

// plainBreaker is latencyLog as a Breaker only.
type plainBreaker struct{ *latencyLog }

func (plainBreaker) RecordLatencyAt() {} // not the interface's method

// script returns an op whose attempt n takes steps[n-1].d and returns its
// error.
func script(steps ...answer) func(context.Context) error {
	var (
		mu sync.Mutex
		n  int
	)
	return func(ctx context.Context) error {
		mu.Lock()
		s := steps[n]
		n++
		mu.Unlock()
		select {
		case <-time.After(s.d):
			return s.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TestLatencyHook runs calls through recoil.Do under policies whose
// limiter or breaker asks for latencies (or does not), and checks what
// each was told, in order.
func TestLatencyHook(t *testing.T) {
	overloaded, throttled, broken := statusErr(503, ""), statusErr(429, ""), statusErr(500, "")
	tests := []struct {
		name   string
		policy func(l *latencyLog) *recoil.Policy
		steps  []answer
		want   string
	}{
		{"latency limiter: each attempt's latency, 503 and 429 as overload",
			func(l *latencyLog) *recoil.Policy { return &recoil.Policy{Limiter: l, MaxAttempts: 4} },
			[]answer{{300 * time.Millisecond, overloaded}, {20 * time.Millisecond, throttled}, {50 * time.Millisecond, broken}, {80 * time.Millisecond, nil}},
			"release(300ms,true) release(20ms,true) release(50ms,false) release(80ms,false)"},
		{"a timeout is overload",
			func(l *latencyLog) *recoil.Policy {
				return &recoil.Policy{Limiter: l, AttemptTimeout: 200 * time.Millisecond, MaxAttempts: 2}
			},
			[]answer{{time.Second, nil}, {10 * time.Millisecond, nil}},
			"release(200ms,true) release(10ms,false)"},
		{"a plain limiter is released, untimed",
			func(l *latencyLog) *recoil.Policy { return &recoil.Policy{Limiter: plainLimiter{l}} },
			[]answer{{300 * time.Millisecond, broken}, {10 * time.Millisecond, nil}},
			"release release"},
		{"latency breaker: each answered attempt's latency",
			func(l *latencyLog) *recoil.Policy { return &recoil.Policy{Breaker: l, Budget: recoil.NoBudget} },
			[]answer{{300 * time.Millisecond, overloaded}, {40 * time.Millisecond, statusErr(400, "")}},
			"record(failure,300ms) record(success,40ms)"},
		{"a plain breaker is recorded, untimed",
			func(l *latencyLog) *recoil.Policy { return &recoil.Policy{Breaker: plainBreaker{l}} },
			[]answer{{300 * time.Millisecond, nil}},
			"record(success)"},
		{"a latency breaker times attempts for a plain limiter's policy too",
			func(l *latencyLog) *recoil.Policy {
				return &recoil.Policy{Breaker: l, Limiter: limit.Must(limit.New(limit.Config{Capacity: 1}))}
			},
			[]answer{{70 * time.Millisecond, nil}},
			"record(success,70ms)"},
		{"a fallback target's latency breaker",
			func(l *latencyLog) *recoil.Policy {
				return &recoil.Policy{Budget: recoil.NoBudget, Fallback: &recoil.Fallback{Targets: []recoil.Target{{Name: "a", Breaker: l}, {Name: "b"}}}}
			},
			[]answer{{30 * time.Millisecond, broken}, {60 * time.Millisecond, nil}},
			"record(failure,30ms) record(success,60ms)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &latencyLog{free: 10}
				p := tt.policy(l)
				p.Backoff = backoff.Constant(time.Second)
				p.OverloadBackoff = backoff.Constant(time.Second)
				op := script(tt.steps...)
				if p.Fallback != nil {
					_ = recoil.DoTarget(context.Background(), p, func(ctx context.Context, _ *recoil.Target) error { return op(ctx) })
				} else {
					_ = recoil.Do(context.Background(), p, op)
				}
				if got := l.String(); got != tt.want {
					t.Errorf("told %q, want %q", got, tt.want)
				}
				if l.free != 10 {
					t.Errorf("%d slots free after the call, want 10", l.free)
				}
			})
		})
	}
}

// TestLatencyHookHedged: two attempts in flight at once each get their
// own latency; an abandoned one goes back untimed.
func TestLatencyHookHedged(t *testing.T) {
	for _, tt := range []struct {
		name  string
		steps []answer
		want  string
	}{
		{"both answer", []answer{{300 * time.Millisecond, statusErr(503, "")}, {400 * time.Millisecond, nil}},
			"release(300ms,true) release(400ms,false)"},
		{"the loser is abandoned", []answer{{time.Second, nil}, {50 * time.Millisecond, nil}},
			"release(50ms,false) release"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &latencyLog{free: 10}
				p := &recoil.Policy{Limiter: l, Budget: recoil.NoBudget, Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}}
				if err := recoil.Do(context.Background(), p, script(tt.steps...)); err != nil {
					t.Fatal(err)
				}
				if got := l.String(); got != tt.want {
					t.Errorf("told %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// TestPriorityHook: a PriorityLimiter hears each attempt's priority — the
// context's, else the policy's — and whether it is a retry; a plain one
// is asked as before.
func TestPriorityHook(t *testing.T) {
	boom := statusErr(500, "")
	for _, tt := range []struct {
		name   string
		ctx    func(context.Context) context.Context
		policy *recoil.Policy
		never  bool
		want   string
	}{
		{"the zero policy is interactive", nil, &recoil.Policy{}, false,
			"try(interactive,false) release try(interactive,true) release"},
		{"Background() is background", nil, recoil.Background(), false,
			"try(background,false) release try(background,true) release"},
		{"the context wins", func(ctx context.Context) context.Context { return recoil.WithPriority(ctx, recoil.PriorityBackground) },
			recoil.Interactive(), false, "try(background,false) release try(background,true) release"},
		{"a full limiter is waited on with the priority", nil, recoil.Background(), true,
			"try(background,false) acquire(background,false) release try(background,true) acquire(background,true) release"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &latencyLog{free: 10, never: tt.never}
				p := tt.policy
				p.Limiter, p.Backoff, p.MaxAttempts = priorityLog{l}, backoff.None{}, 2
				ctx := context.Background()
				if tt.ctx != nil {
					ctx = tt.ctx(ctx)
				}
				_ = recoil.Do(ctx, p, script(answer{0, boom}, answer{0, boom}))
				if got := strings.ReplaceAll(l.String(), "release(0s,false)", "release"); got != tt.want {
					t.Errorf("told %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// TestLatencyVirtualTime: a driver on its own clock (the simulator) gets
// latencies in its clock's time, through Next, Success and Fail.
func TestLatencyVirtualTime(t *testing.T) {
	l := &latencyLog{free: 10}
	p := &recoil.Policy{Limiter: l, Budget: recoil.NoBudget, Backoff: backoff.Constant(time.Second)}
	at := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	c := p.Begin(at, time.Time{})
	c.Next(at)
	s := c.Fail(at.Add(12*time.Second), statusErr(529, ""), recoil.StatusVerdict(529))
	at = at.Add(12*time.Second + s.Wait)
	c.Next(at)
	c.Success(at.Add(1500 * time.Millisecond))
	if got, want := l.String(), "release(12s,true) release(1.5s,false)"; got != want {
		t.Errorf("told %q, want %q", got, want)
	}
}

// TestAdaptiveThroughDo: limit.Adaptive is a LatencyLimiter and a
// PriorityLimiter, and overload through Do lowers its limit.
func TestAdaptiveThroughDo(t *testing.T) {
	var (
		_ recoil.LatencyLimiter  = (*limit.Adaptive)(nil)
		_ recoil.PriorityLimiter = (*limit.Adaptive)(nil)
	)
	synctest.Test(t, func(t *testing.T) {
		a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 10, Window: 100 * time.Millisecond}))
		p := &recoil.Policy{Limiter: a, MaxAttempts: 1}
		for range 20 {
			_ = recoil.Do(context.Background(), p, script(answer{60 * time.Millisecond, statusErr(529, "")}))
		}
		if a.Limit() >= 10 || a.InUse() != 0 {
			t.Errorf("after 20 overloaded attempts: limit %d (want below 10), %d in use", a.Limit(), a.InUse())
		}
	})
}

// TestSlowCallBreakerThroughDo: a breaker.Breaker with a SlowCallThreshold
// hears each attempt's latency from the loop, and opens on slow successes;
// one without a threshold is not timed and stays closed.
func TestSlowCallBreakerThroughDo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings breaker.Settings
		open     bool
	}{
		{"slow-call rate", breaker.Settings{ConsecutiveFailures: -1, SlowCallRate: 0.5, SlowCallThreshold: time.Second, MinRequests: 4, Window: time.Minute}, true},
		{"no threshold", breaker.Settings{ConsecutiveFailures: -1, FailureRate: 0.5, MinRequests: 4, Window: time.Minute}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := breaker.Must(breaker.New(tc.settings))
				if got := b.WantsLatency(); got != tc.open {
					t.Errorf("WantsLatency() = %v, want %v", got, tc.open)
				}
				p := &recoil.Policy{Breaker: b, Budget: recoil.NoBudget}
				for range 4 {
					if err := recoil.Do(t.Context(), p, func(context.Context) error {
						time.Sleep(2 * time.Second) // slow, and a success
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
				err := recoil.Do(t.Context(), p, func(context.Context) error { return nil })
				if open := err != nil; open != tc.open {
					t.Errorf("after 4 slow successes: Do = %v; want the breaker open: %v", err, tc.open)
				}
			})
		})
	}
}
