package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/limit"
)

// answer is one scripted attempt: it answers err after d.
type answer struct {
	d   time.Duration
	err error
}

// TestHedge runs one hedged Get per row in a synctest bubble: attempt n
// answers as script[n-1] says. It checks the value, the attempts, the
// hedges and the waste, the time the call took, and that every loser's
// context was cancelled (synctest also fails the test if an attempt's
// goroutine outlives the call).
func TestHedge(t *testing.T) {
	boom := statusErr(500, "")
	tests := []struct {
		name    string
		policy  func(p *recoil.Policy)
		script  []answer
		want    string // the value, or the error's text
		took    time.Duration
		attempt int
		hedges  int
		wasted  int
		refused int
		events  string
	}{
		{name: "the hedge wins", script: []answer{{5 * time.Second, nil}, {50 * time.Millisecond, nil}},
			want: "attempt 2", took: 150 * time.Millisecond, attempt: 2, hedges: 1, wasted: 1, events: "2:ok 1:canceled"},
		{name: "the first attempt wins", script: []answer{{150 * time.Millisecond, nil}, {time.Second, nil}},
			want: "attempt 1", took: 150 * time.Millisecond, attempt: 2, hedges: 1, wasted: 1, events: "1:ok 2:canceled"},
		{name: "two hedges, the second wins", policy: func(p *recoil.Policy) { p.Hedge.MaxHedges, p.MaxAttempts = 2, 3 },
			script: []answer{{time.Second, nil}, {time.Second, nil}, {10 * time.Millisecond, nil}},
			want:   "attempt 3", took: 210 * time.Millisecond, attempt: 3, hedges: 2, wasted: 2, events: "3:ok 1:canceled 2:canceled"},
		{name: "a failure waits for the hedge", script: []answer{{120 * time.Millisecond, boom}, {100 * time.Millisecond, nil}},
			want: "attempt 2", took: 200 * time.Millisecond, attempt: 2, hedges: 1, events: "1:transient 2:ok"},
		{name: "both fail: the retry waits its backoff", script: []answer{{120 * time.Millisecond, boom}, {30 * time.Millisecond, boom}, {0, nil}},
			want: "attempt 3", took: 130*time.Millisecond + time.Second, attempt: 3, hedges: 1, events: "1:transient 2:transient 3:ok"},
		{name: "a permanent failure ends the call and abandons the hedge", script: []answer{{150 * time.Millisecond, statusErr(400, "")}, {time.Second, nil}},
			want: "permanent error after 2 attempts", took: 150 * time.Millisecond, attempt: 2, hedges: 1, wasted: 1, events: "1:permanent 2:canceled"},
		{name: "the budget refuses the hedge", policy: func(p *recoil.Policy) { p.Budget = refuseRetries{Admit: true} },
			script: []answer{{time.Second, nil}}, want: "attempt 1", took: time.Second, attempt: 1, refused: 1, events: "1:ok"},
		{name: "a full limiter refuses the hedge", policy: func(p *recoil.Policy) { p.Limiter = limit.Must(limit.New(limit.Config{Capacity: 1})) },
			script: []answer{{time.Second, nil}}, want: "attempt 1", took: time.Second, attempt: 1, refused: 1, events: "1:ok"},
		{name: "a limiter with room gives the hedge a slot", policy: func(p *recoil.Policy) { p.Limiter = limit.Must(limit.New(limit.Config{Capacity: 2})) },
			script: []answer{{time.Second, nil}, {10 * time.Millisecond, nil}}, want: "attempt 2", took: 110 * time.Millisecond, attempt: 2, hedges: 1, wasted: 1, events: "2:ok 1:canceled"},
		{name: "no hedge that cannot finish before the deadline", policy: func(p *recoil.Policy) { p.Timeout, p.MinAttempt = 150*time.Millisecond, 100*time.Millisecond },
			script: []answer{{140 * time.Millisecond, nil}}, want: "attempt 1", took: 140 * time.Millisecond, attempt: 1, events: "1:ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &recoil.Policy{Budget: recoil.NoBudget, Backoff: backoff.Constant(time.Second), Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}}
				if tt.policy != nil {
					tt.policy(p)
				}
				var (
					mu     sync.Mutex
					events []string
					sum    recoil.Summary
					losers []context.Context
				)
				p.OnAttempt = func(_ context.Context, e recoil.AttemptEvent) {
					mu.Lock()
					defer mu.Unlock()
					what := "ok"
					if e.Err != nil || e.Verdict.Class != recoil.ClassUnknown {
						what = e.Verdict.Class.String()
					}
					events = append(events, fmt.Sprintf("%d:%s", e.Attempt, what))
				}
				p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
				var n int
				start := time.Now()
				v, err := recoil.Get(t.Context(), p, func(ctx context.Context) (string, error) {
					mu.Lock()
					n++
					a := tt.script[min(n, len(tt.script))-1]
					me := n
					losers = append(losers, ctx)
					mu.Unlock()
					tm := time.NewTimer(a.d)
					defer tm.Stop()
					select {
					case <-tm.C:
						return fmt.Sprintf("attempt %d", me), a.err
					case <-ctx.Done():
						return "", ctx.Err()
					}
				})
				took := time.Since(start)
				got := v
				if err != nil {
					got = err.Error()
				}
				if !strings.Contains(got, tt.want) {
					t.Errorf("Get() = %q, want %q", got, tt.want)
				}
				if took != tt.took {
					t.Errorf("took %v, want %v", took, tt.took)
				}
				if sum.Attempts != tt.attempt || sum.Hedges != tt.hedges || sum.Wasted != tt.wasted || sum.RefusedHedges != tt.refused {
					t.Errorf("Summary: %d attempts, %d hedges, %d wasted, %d refused; want %d, %d, %d, %d",
						sum.Attempts, sum.Hedges, sum.Wasted, sum.RefusedHedges, tt.attempt, tt.hedges, tt.wasted, tt.refused)
				}
				if got := strings.Join(events, " "); got != tt.events {
					t.Errorf("events %q, want %q", got, tt.events)
				}
				for i, ctx := range losers {
					if ctx.Err() == nil {
						t.Errorf("attempt %d's context is still live after the call", i+1)
					}
				}
				if l, ok := p.Limiter.(*limit.Limiter); ok && l.InUse() != 0 {
					t.Errorf("the limiter holds %d slots after the call", l.InUse())
				}
			})
		})
	}
}

// TestHedgeQuantile: the hedge delay follows the recent latencies once
// there are enough of them.
func TestHedgeQuantile(t *testing.T) {
	h := &recoil.Hedge{Delay: 2 * time.Second, Quantile: 0.95}
	if got := h.After(); got != 2*time.Second {
		t.Fatalf("After() with no latencies = %v, want the Delay", got)
	}
	for i := 1; i <= 100; i++ {
		h.Observe(time.Duration(i) * 10 * time.Millisecond) // 10ms .. 1s
	}
	if got := h.After(); got < 930*time.Millisecond || got > 960*time.Millisecond {
		t.Errorf("After() = %v, want the p95 of 10ms..1s (about 950ms)", got)
	}
	for range 300 { // the window turns over to fast latencies
		h.Observe(20 * time.Millisecond)
	}
	if got := h.After(); got != 20*time.Millisecond {
		t.Errorf("After() = %v after the window turned over, want 20ms", got)
	}
	if got := (&recoil.Hedge{}).After(); got != recoil.DefaultHedgeDelay {
		t.Errorf("the zero Hedge's After() = %v, want DefaultHedgeDelay", got)
	}
}

// TestHedgeQuantilePerTarget: each target of a chain is raced at its own
// quantile, learned from its own successes through the one policy.
func TestHedgeQuantilePerTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &recoil.Hedge{Delay: 5 * time.Second, Quantile: 0.95}
		p := &recoil.Policy{Budget: recoil.NoBudget, Fallback: targets("fast", "slow"), Hedge: h}
		wait := func(ctx context.Context, d time.Duration) {
			tm := time.NewTimer(d)
			defer tm.Stop()
			select {
			case <-tm.C:
			case <-ctx.Done():
			}
		}
		slowOnly := false
		for range 40 {
			err := recoil.DoTarget(t.Context(), p, func(ctx context.Context, tg *recoil.Target) error {
				if tg.Name == "fast" {
					if slowOnly {
						return errRetired
					}
					wait(ctx, 10*time.Millisecond)
					return nil
				}
				wait(ctx, 400*time.Millisecond)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slowOnly = !slowOnly // every other call: a retired fast target moves on to slow
			p.Fallback.Restore("fast")
		}
		if got := h.AfterTarget(0); got != 10*time.Millisecond {
			t.Errorf("AfterTarget(fast) = %v, want the fast target's 10ms", got)
		}
		if got := h.AfterTarget(1); got != 400*time.Millisecond {
			t.Errorf("AfterTarget(slow) = %v, want the slow target's 400ms", got)
		}
		if got := h.AfterTarget(7); got != 5*time.Second {
			t.Errorf("AfterTarget(7) with no latencies = %v, want the Delay", got)
		}
	})
}

// TestHedgeRefusedByAllowanceKeepsTheTarget: a target whose allowance
// refuses a hedge still has the raced attempt in flight: it answers, and
// the target is not cooled for the calls after.
func TestHedgeRefusedByAllowanceKeepsTheTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := targets("a", "b")
		f.Targets[0].Allowance = refuseRetries{Admit: true} // admits calls, refuses every further attempt
		var sum recoil.Summary
		p := &recoil.Policy{Budget: recoil.NoBudget, Fallback: f, Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond},
			Observe: func(_ context.Context, s recoil.Summary) { sum = s }}
		err := recoil.DoTarget(t.Context(), p, func(ctx context.Context, tg *recoil.Target) error {
			time.Sleep(time.Second) // slow: the hedge delay passes
			return nil
		})
		if err != nil || sum.RefusedHedges != 1 || sum.Hedges != 0 {
			t.Fatalf("DoTarget = %v; %d hedges, %d refused; want success with the one hedge refused", err, sum.Hedges, sum.RefusedHedges)
		}
		if st := f.Status(time.Time{}); st[0].Cooling != 0 || st[0].Out {
			t.Errorf("target a after a refused hedge: %+v, want it in use", st[0])
		}
	})
}

// TestHedgeAtOnceAfterAFailure: with hedges left, a failure while another
// attempt is in flight sends the next hedge at once (gRFC A6), not after
// another hedge delay.
func TestHedgeAtOnceAfterAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		p := &recoil.Policy{Budget: recoil.NoBudget, MaxAttempts: 4, Hedge: &recoil.Hedge{Delay: time.Second, MaxHedges: 2}}
		var mu sync.Mutex
		var starts []time.Duration
		err := recoil.Do(t.Context(), p, func(ctx context.Context) error {
			mu.Lock()
			starts = append(starts, time.Since(t0))
			n := len(starts)
			mu.Unlock()
			switch n {
			case 1: // slow: raced at 1s
				select {
				case <-time.After(10 * time.Second):
				case <-ctx.Done():
				}
				return ctx.Err()
			case 2: // the hedge fails after 100ms
				time.Sleep(100 * time.Millisecond)
				return statusErr(503, "")
			}
			return nil
		})
		want := []time.Duration{0, time.Second, 1100 * time.Millisecond}
		if err != nil || fmt.Sprint(starts) != fmt.Sprint(want) {
			t.Errorf("Do = %v, attempts started at %v; want success, at %v", err, starts, want)
		}
	})
}

// TestHedgeAfterAllocatesNothing: the quantile is recomputed in place.
func TestHedgeAfterAllocatesNothing(t *testing.T) {
	h := &recoil.Hedge{Quantile: 0.95}
	for i := range 100 {
		h.Observe(time.Duration(i) * time.Millisecond)
	}
	if n := testing.AllocsPerRun(100, func() {
		for range 8 {
			h.Observe(time.Millisecond)
		}
		h.After()
	}); n != 0 {
		t.Errorf("Observe and After: %v allocations, want 0", n)
	}
}

// TestHedgeSteps drives a hedged Call by hand on an explicit clock, as a
// simulator would: the hedge is offered after HedgeAfter, a failure while
// it is in flight is pending, and its success ends the call.
func TestHedgeSteps(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &recoil.Policy{Budget: recoil.NoBudget, Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}}
	var sum recoil.Summary
	p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
	c := p.Begin(t0, time.Time{})
	if s := c.Next(t0); s.Kind != recoil.StepAttempt || s.Attempt != 1 {
		t.Fatalf("Next = %+v, want attempt 1", s)
	}
	if c.HedgeAfter() != 100*time.Millisecond {
		t.Fatalf("HedgeAfter = %v, want 100ms", c.HedgeAfter())
	}
	h, ok := c.Hedge(t0.Add(100 * time.Millisecond))
	if !ok || h.Attempt != 2 {
		t.Fatalf("Hedge = %+v, %v; want attempt 2", h, ok)
	}
	if _, ok := c.Hedge(t0.Add(200 * time.Millisecond)); ok || c.HedgeAfter() != 0 {
		t.Fatal("a second hedge past MaxHedges")
	}
	err := statusErr(503, "")
	v, _ := recoil.VerdictOf(err)
	if s := c.FailOf(t0.Add(150*time.Millisecond), 1, err, v); s.Kind != recoil.StepPending {
		t.Fatalf("FailOf(1) with attempt 2 in flight = %+v, want StepPending", s)
	}
	c.SuccessOf(t0.Add(300*time.Millisecond), 2)
	if sum.Err != nil || sum.Attempts != 2 || sum.Hedges != 1 || sum.Wasted != 0 {
		t.Errorf("Summary = %+v, want a success in 2 attempts with 1 hedge and no waste", sum)
	}
}

// TestHedgeWithFallback: a hedge goes to the target of the attempt it
// races, and the chain's moves and hedges share MaxAttempts.
func TestHedgeWithFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &recoil.Policy{Budget: recoil.NoBudget, MaxAttempts: 4, Fallback: targets("a", "b"), Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}}
		var mu sync.Mutex
		var route []string
		v, err := recoil.GetTarget(t.Context(), p, func(ctx context.Context, tg *recoil.Target) (string, error) {
			mu.Lock()
			route = append(route, tg.Name)
			n := len(route)
			mu.Unlock()
			switch {
			case tg.Name == "a":
				return "", errRetired
			case n == 2: // the first attempt to b is slow: raced by a hedge to b
				tm := time.NewTimer(time.Second)
				defer tm.Stop()
				select {
				case <-tm.C:
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			return fmt.Sprintf("%s answered attempt %d", tg.Name, n), nil
		})
		if err != nil || v != "b answered attempt 3" {
			t.Fatalf("GetTarget() = %q, %v", v, err)
		}
		if got := strings.Join(route, " "); got != "a b b" {
			t.Errorf("attempts went to %q, want \"a b b\"", got)
		}
	})
}

// TestHedgeDriverCancel: a caller that leaves while a hedge is in flight
// gets its cause at once, and both attempts are given up.
func TestHedgeCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &recoil.Policy{Budget: recoil.NoBudget, Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}}
		ctx, cancel := context.WithCancelCause(t.Context())
		left := errors.New("the caller left")
		time.AfterFunc(250*time.Millisecond, func() { cancel(left) })
		var sum recoil.Summary
		p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
		err := recoil.Do(ctx, p, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		if !errors.Is(err, left) || sum.Attempts != 2 || sum.Reason != recoil.ReasonCanceled || sum.Wasted != 0 {
			t.Fatalf("Do() = %v; Summary %+v", err, sum)
		}
	})
}

// TestHedgeMoveLeavesTheHedge: a failure that moves the call to the next
// target while a hedge to the first is in flight leaves that hedge behind
// (cancelled, counted once) and goes on at once.
func TestHedgeMoveLeavesTheHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &recoil.Policy{Budget: recoil.NoBudget, Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}, Fallback: targets("a", "b")}
		var sum recoil.Summary
		events := 0
		p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
		p.OnAttempt = func(context.Context, recoil.AttemptEvent) { events++ }
		var mu sync.Mutex
		n := 0
		start := time.Now()
		v, err := recoil.GetTarget(t.Context(), p, func(ctx context.Context, tg *recoil.Target) (string, error) {
			mu.Lock()
			n++
			me := n
			mu.Unlock()
			switch {
			case me == 1: // a's model is retired, said after 150 ms
				tm := time.NewTimer(150 * time.Millisecond)
				defer tm.Stop()
				<-tm.C
				return "", errRetired
			case tg.Name == "a": // the hedge to a hangs
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "b", nil
		})
		if err != nil || v != "b" {
			t.Fatalf("GetTarget() = %q, %v; want b", v, err)
		}
		if took := time.Since(start); took != 150*time.Millisecond {
			t.Errorf("took %v, want 150ms: the move goes at once, without waiting for the hedge", took)
		}
		if sum.Attempts != 3 || sum.Hedges != 1 || sum.Wasted != 1 || events != 3 {
			t.Errorf("Summary: %d attempts, %d hedges, %d wasted, %d events; want 3, 1, 1, 3", sum.Attempts, sum.Hedges, sum.Wasted, events)
		}
	})
}
