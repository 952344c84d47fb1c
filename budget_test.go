package recoil_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

// amplification drives n logical calls through p on a virtual clock, each
// attempt failing independently with probability fail, and returns attempts
// per call and the share of calls answered. The calls run one after
// another: a long degradation, not a burst.
func amplification(p *recoil.Policy, n int, fail float64, seed uint64) (perCall, answered float64) {
	rnd := rand.New(rand.NewPCG(seed, seed))
	now := time.Date(2026, 11, 30, 14, 2, 0, 0, time.UTC)
	errFault := errors.New("503 from the failing provider")
	attempts, ok := 0, 0
	for range n {
		c := p.Begin(now, time.Time{})
		for {
			if s := c.Next(now); s.Kind != recoil.StepAttempt {
				break
			}
			attempts++
			now = now.Add(10 * time.Millisecond)
			if rnd.Float64() >= fail {
				c.Success(now)
				ok++
				break
			}
			s := c.Fail(now, errFault, p.Verdict(errFault, recoil.Verdict{}))
			if s.Kind == recoil.StepDone {
				break
			}
			now = now.Add(s.Wait)
		}
	}
	return float64(attempts) / float64(n), float64(ok) / float64(n)
}

// The check of docs/why.md, sections 4 and 5: a provider degrades to an
// independent failure rate. With backoff, full jitter and three attempts but
// no budget, retry traffic stays proportional to the failure rate — 1 + p +
// p² attempts per request, 1.56× at 40 % — for as long as the fault lasts.
// Backoff and jitter change when retries land, not how many there are. The
// default budget (budget.Share) holds attempts per call to at most
// 1 + 0.2 × the share answered (plus its reserve of 10 over the run), lets
// every retry of a low failure rate go, and never answers fewer calls than
// one attempt each would (1 − p).
func TestBudgetBoundsAmplification(t *testing.T) {
	jitter := backoff.FullJitter{Base: 100 * time.Millisecond, Max: 20 * time.Second}
	const calls = 100_000
	tests := []struct {
		name    string
		p       *recoil.Policy
		fail    float64
		lo, hi  float64 // attempts per call
		share   float64 // the budget's share of successes; 0: no budget
		reserve float64
	}{
		{"no budget, 20% failure", &recoil.Policy{Backoff: jitter, Budget: recoil.NoBudget}, 0.2, 1.23, 1.25, 0, 0},  // 1.24
		{"no budget, 40% failure", &recoil.Policy{Backoff: jitter, Budget: recoil.NoBudget}, 0.4, 1.55, 1.57, 0, 0},  // 1.56
		{"no budget, 60% failure", &recoil.Policy{Backoff: jitter, Budget: recoil.NoBudget}, 0.6, 1.95, 1.97, 0, 0},  // 1.96
		{"default budget, 5% failure: every retry goes", &recoil.Policy{Backoff: jitter}, 0.05, 1.05, 1.06, 0.2, 10}, // 1.0525
		{"default budget, 10% failure: every retry goes", &recoil.Policy{Backoff: jitter}, 0.1, 1.10, 1.12, 0.2, 10}, // 1.11
		{"default budget, 20% failure", &recoil.Policy{Backoff: jitter}, 0.2, 1.15, 1.20, 0.2, 10},
		{"default budget, 40% failure", &recoil.Policy{Backoff: jitter}, 0.4, 1.10, 1.15, 0.2, 10},
		{"default budget, 60% failure", &recoil.Policy{Backoff: jitter}, 0.6, 1.05, 1.10, 0.2, 10},
		{"default budget, 100% failure: only the reserve", &recoil.Policy{Backoff: jitter}, 1, 1.0, 1.0002, 0.2, 10},
		{"background preset, 40% failure", recoil.Background(), 0.4, 1.0, 1.1, 0.1, 20},
		{"interactive preset, 40% failure", recoil.Interactive(), 0.4, 1.10, 1.15, 0.2, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, answered := amplification(tt.p, calls, tt.fail, 1)
			if got < tt.lo || got > tt.hi {
				t.Errorf("attempts per request = %.4f, want in [%.2f, %.2f]", got, tt.lo, tt.hi)
			}
			if bound := 1 + tt.share*answered + tt.reserve/calls; tt.share > 0 && got > bound+1e-9 {
				t.Errorf("attempts per request = %.4f, above the budget's bound %.4f", got, bound)
			}
			// One attempt each answers 1 − p of the calls; retries only add.
			if noRetry := 1 - tt.fail; answered < noRetry-0.005 {
				t.Errorf("answered %.4f of the calls, fewer than one attempt each would (%.4f)", answered, noRetry)
			}
		})
	}
}

// The default budget is per policy and shared by its calls: draining one
// policy's budget leaves another's untouched.
func TestDefaultBudgetPerPolicy(t *testing.T) {
	a, b := &recoil.Policy{Backoff: backoff.None{}}, &recoil.Policy{Backoff: backoff.None{}}
	if got, _ := amplification(a, 1000, 1, 1); got > 1.01 {
		t.Fatalf("a: attempts per request = %.3f after its budget drained, want about 1", got)
	}
	c := b.Begin(time.Time{}, time.Time{})
	_ = c.Next(time.Time{})
	if s := c.Fail(time.Time{}, errors.New("x"), recoil.Verdict{Class: recoil.ClassTransient}); s.Err != nil {
		t.Errorf("b's first failure was refused a retry (%v): budgets leak between policies", s.Err)
	}
	// NoBudget allows every retry the rest of the policy allows.
	if got, _ := amplification(&recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget}, 1000, 1, 1); got != 3 {
		t.Errorf("NoBudget: attempts per request = %.3f, want 3", got)
	}
}

func TestPresets(t *testing.T) {
	tests := []struct {
		name        string
		p           *recoil.Policy
		attempts    int
		maxWait     time.Duration // Retry-After above this stops the call
		firstWaitLE time.Duration // the first transient wait's ceiling
	}{
		{"interactive", recoil.Interactive(), 2, 2 * time.Second, 50 * time.Millisecond},
		{"background", recoil.Background(), 6, 10 * time.Minute, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := amplification(tt.p, 1, 1, 1); got != float64(tt.attempts) {
				t.Errorf("attempts on a failing call = %v, want %d", got, tt.attempts)
			}
			over := tt.p.Decide(recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassThrottled, Wait: tt.maxWait + time.Second}})
			if over.Reason != recoil.ReasonWaitTooLong {
				t.Errorf("Retry-After %v: %v, want wait too long", tt.maxWait+time.Second, over.Reason)
			}
			if d := tt.p.Decide(recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassTransient}}); d.Wait > tt.firstWaitLE {
				t.Errorf("first wait = %v, want at most %v", d.Wait, tt.firstWaitLE)
			}
		})
	}
	if a, b := recoil.Interactive(), recoil.Interactive(); a == b {
		t.Error("Interactive() returned the same policy twice; each needs its own budget")
	}
}
