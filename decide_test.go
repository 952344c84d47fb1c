package recoil_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// refuse is a budget that refuses every retry.
type refuse struct{ asked int }

func (r *refuse) AdmitAt(time.Time) bool               { return true }
func (r *refuse) RetryAt(time.Time, budget.Cause) bool { r.asked++; return false }
func (r *refuse) RecordAt(time.Time, budget.Outcome)   {}

func TestDecide(t *testing.T) {
	constant := &recoil.Policy{Backoff: backoff.Constant(4 * time.Second)}
	capped := &recoil.Policy{MaxServerWait: 10 * time.Second}
	transient := recoil.Verdict{Class: recoil.ClassTransient}
	tests := []struct {
		name       string
		p          *recoil.Policy
		f          recoil.Failure
		wantRetry  bool
		wantReason recoil.Reason
		wantWait   time.Duration // exact, or the minimum when maxWait is set
		maxWait    time.Duration
	}{
		{"permanent stops at once", nil, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassPermanent}}, false, recoil.ReasonPermanent, 0, 0},
		{"cancelled stops at once", nil, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassCanceled}}, false, recoil.ReasonCanceled, 0, 0},
		{"transient retries", constant, recoil.Failure{Attempt: 1, Verdict: transient}, true, recoil.ReasonNone, 4 * time.Second, 0},
		{"unknown is transient by default", constant, recoil.Failure{Attempt: 1}, true, recoil.ReasonNone, 4 * time.Second, 0},
		{"unknown can default to permanent", &recoil.Policy{Unknown: recoil.ClassPermanent}, recoil.Failure{Attempt: 1}, false, recoil.ReasonPermanent, 0, 0},
		{"default caps at 3 attempts", constant, recoil.Failure{Attempt: 3, Verdict: transient}, false, recoil.ReasonAttempts, 0, 0},
		{"attempt 2 of 3 retries", constant, recoil.Failure{Attempt: 2, Verdict: transient}, true, recoil.ReasonNone, 4 * time.Second, 0},
		{"MaxAttempts 1 never retries", &recoil.Policy{MaxAttempts: 1}, recoil.Failure{Attempt: 1, Verdict: transient}, false, recoil.ReasonAttempts, 0, 0},
		{"3s left, 4s wait: no wait starts", constant, recoil.Failure{Attempt: 1, Verdict: transient, Now: t0, Deadline: t0.Add(3 * time.Second)}, false, recoil.ReasonDeadline, 4 * time.Second, 0},
		{"wait plus minimal attempt must fit", constant, recoil.Failure{Attempt: 1, Verdict: transient, Now: t0, Deadline: t0.Add(4*time.Second + 5*time.Millisecond)}, false, recoil.ReasonDeadline, 4 * time.Second, 0},
		{"wait that fits starts", constant, recoil.Failure{Attempt: 1, Verdict: transient, Now: t0, Deadline: t0.Add(4*time.Second + recoil.DefaultMinAttempt)}, true, recoil.ReasonNone, 4 * time.Second, 0},
		{"Retry-After 30s over a 10s cap stops with the wait", capped, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassThrottled, Wait: 30 * time.Second}}, false, recoil.ReasonWaitTooLong, 30 * time.Second, 0},
		{"Retry-After is never shortened", capped, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassThrottled, Wait: 5 * time.Second}}, true, recoil.ReasonNone, 5 * time.Second, 5500 * time.Millisecond},
		{"Retry-After past the deadline stops with the wait", capped, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassThrottled, Wait: 5 * time.Second}, Now: t0, Deadline: t0.Add(2 * time.Second)}, false, recoil.ReasonDeadline, 5 * time.Second, 0},
		{"Retry-After jitter stays inside the deadline", capped, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassThrottled, Wait: 5 * time.Second}, Now: t0, Deadline: t0.Add(5*time.Second + recoil.DefaultMinAttempt)}, true, recoil.ReasonNone, 5 * time.Second, 5 * time.Second},
		{"Retry-After on a transient failure is honoured too", capped, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassTransient, Wait: 2 * time.Second}}, true, recoil.ReasonNone, 2 * time.Second, 2200 * time.Millisecond},
		{"Retry-After on a permanent failure is ignored", capped, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassPermanent, Wait: 2 * time.Second}}, false, recoil.ReasonPermanent, 0, 0},
		{"overloaded uses the longer schedule", &recoil.Policy{OverloadBackoff: backoff.Constant(3 * time.Second)}, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassOverloaded}}, true, recoil.ReasonNone, 3 * time.Second, 0},
		{"throttled without a wait uses the longer schedule", &recoil.Policy{OverloadBackoff: backoff.Constant(3 * time.Second)}, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassThrottled}}, true, recoil.ReasonNone, 3 * time.Second, 0},
		{"default overload schedule is within its first ceiling", &recoil.Policy{}, recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassOverloaded}}, true, recoil.ReasonNone, 0, time.Second},
		{"default backoff is within its first ceiling", &recoil.Policy{}, recoil.Failure{Attempt: 1, Verdict: transient}, true, recoil.ReasonNone, 0, 100 * time.Millisecond},
		{"the budget is not Decide's to ask", &recoil.Policy{Budget: &refuse{}, Backoff: backoff.Constant(4 * time.Second)}, recoil.Failure{Attempt: 1, Verdict: transient}, true, recoil.ReasonNone, 4 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.Rand = rand.New(rand.NewPCG(1, 2))
			d := tt.p.Decide(tt.f)
			if d.Retry != tt.wantRetry || d.Reason != tt.wantReason {
				t.Fatalf("Decide() = %+v, want retry %v reason %v", d, tt.wantRetry, tt.wantReason)
			}
			if tt.maxWait == 0 && d.Wait != tt.wantWait {
				t.Errorf("Decide().Wait = %v, want %v", d.Wait, tt.wantWait)
			}
			if tt.maxWait != 0 && (d.Wait < tt.wantWait || d.Wait > tt.maxWait) {
				t.Errorf("Decide().Wait = %v, want in [%v, %v]", d.Wait, tt.wantWait, tt.maxWait)
			}
		})
	}
}

// Decide is pure: it never asks a budget. The Call asks the policy's budget
// and then the request's, last and only for a retry that Decide lets go: a
// permanent failure, a wait past the deadline or the last attempt spends
// nothing.
func TestCallChargesBudgetLast(t *testing.T) {
	b, req := &refuse{}, &refuse{}
	p := &recoil.Policy{Budget: b, Backoff: backoff.Constant(time.Second)}
	p.Decide(recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassTransient}})
	if b.asked != 0 {
		t.Fatalf("Decide asked the budget %d times, want 0", b.asked)
	}
	fail := func(p *recoil.Policy, deadline time.Time, v recoil.Verdict) recoil.Step {
		c := p.Begin(t0, deadline)
		c.SetRequestBudget(req)
		if s := c.Next(t0); s.Kind != recoil.StepAttempt {
			t.Fatalf("Next() = %+v, want an attempt", s)
		}
		return c.Fail(t0, errors.New("failed"), v)
	}
	fail(p, time.Time{}, recoil.Verdict{Class: recoil.ClassPermanent})
	fail(p, t0.Add(time.Millisecond), recoil.Verdict{Class: recoil.ClassTransient})
	fail(&recoil.Policy{Budget: b, MaxAttempts: 1}, time.Time{}, recoil.Verdict{Class: recoil.ClassTransient})
	if b.asked != 0 || req.asked != 0 {
		t.Errorf("budgets asked %d and %d times for retries that could not go, want 0", b.asked, req.asked)
	}
	if s := fail(p, time.Time{}, recoil.Verdict{Class: recoil.ClassTransient}); !errors.Is(s.Err, recoil.ErrBudget) {
		t.Errorf("Fail() = %+v, want a stop for the budget", s)
	}
	if b.asked != 1 || req.asked != 0 {
		t.Errorf("budgets asked %d and %d times, want 1 and 0: the policy's refused first", b.asked, req.asked)
	}
	if s := fail(&recoil.Policy{Budget: recoil.NoBudget}, time.Time{}, recoil.Verdict{Class: recoil.ClassTransient}); !errors.Is(s.Err, recoil.ErrBudget) {
		t.Errorf("Fail() = %+v, want a stop for the request's budget", s)
	}
	if req.asked != 1 {
		t.Errorf("request budget asked %d times, want 1", req.asked)
	}
}

// Retry-After jitter: many clients told to wait 10 s spread over [10 s, 11 s]
// instead of all returning at 10 s together.
func TestServerWaitSpread(t *testing.T) {
	p := &recoil.Policy{}
	rnd := rand.New(rand.NewPCG(3, 3))
	seen := map[time.Duration]bool{}
	for range 1000 {
		d := p.Decide(recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassThrottled, Wait: 10 * time.Second}, Rand: rnd})
		if d.Wait < 10*time.Second || d.Wait > 11*time.Second {
			t.Fatalf("Decide().Wait = %v, want in [10s, 11s]", d.Wait)
		}
		seen[d.Wait/(100*time.Millisecond)] = true
	}
	if len(seen) < 10 {
		t.Errorf("waits fell in %d of 10 100ms buckets, want all", len(seen))
	}
}
