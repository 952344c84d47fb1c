package recoil_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/limit"
)

// The guard packages implement the interfaces the decision consults.
var (
	_ recoil.Budget  = (*budget.TokenBucket)(nil)
	_ recoil.Budget  = (*budget.Ratio)(nil)
	_ recoil.Budget  = (*budget.Quota)(nil)
	_ recoil.Budget  = (*budget.Adaptive)(nil)
	_ recoil.Breaker = (*breaker.Breaker)(nil)
	_ recoil.Limiter = (*limit.Limiter)(nil)
)

// The real breaker, wired into a policy: five consecutive failures open the
// circuit and later calls fail fast without calling op; after the open
// period a probe goes through and closes it.
func TestBreakerInPolicy(t *testing.T) {
	br := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 5, OpenDuration: 30 * time.Second}))
	p := &recoil.Policy{Breaker: br, MaxAttempts: 1, Budget: recoil.NoBudget}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	call := func(fail bool) error {
		c := p.Begin(now, time.Time{})
		if s := c.Next(now); s.Kind != recoil.StepAttempt {
			return s.Err
		}
		if fail {
			return c.Fail(now, errors.New("503"), recoil.Verdict{Class: recoil.ClassOverloaded}).Err
		}
		c.Success(now)
		return nil
	}
	for i := range 5 {
		if err := call(true); errors.Is(err, recoil.ErrCircuitOpen) {
			t.Fatalf("failure %d: circuit open too early", i+1)
		}
	}
	if err := call(false); !errors.Is(err, recoil.ErrCircuitOpen) {
		t.Fatalf("after 5 failures: %v, want ErrCircuitOpen", err)
	}
	now = now.Add(30 * time.Second)
	if err := call(false); err != nil {
		t.Fatalf("probe after the open period: %v", err)
	}
	if got := br.StateAt(now); got != breaker.Closed {
		t.Errorf("state after a good probe = %v, want closed", got)
	}
}

// A permanent failure (a validator's 400) says the dependency is up: it
// never trips the breaker.
func TestPermanentDoesNotTripBreaker(t *testing.T) {
	br := breaker.Must(breaker.New(breaker.Settings{}))
	p := &recoil.Policy{Breaker: br}
	for range 20 {
		_ = recoil.Do(context.Background(), p, func(context.Context) error { return recoil.Permanent(errors.New("400")) })
	}
	if got := br.State(); got != breaker.Closed {
		t.Errorf("state after 20 permanent failures = %v, want closed", got)
	}
}

// The limiter is held for one attempt at a time, never across a wait.
func TestLimiterNotHeldDuringWait(t *testing.T) {
	synctest.Test(t, limiterNotHeldDuringWait)
}

func limiterNotHeldDuringWait(t *testing.T) {
	lim := limit.Must(limit.New(limit.Config{Capacity: 1}))
	p := &recoil.Policy{Limiter: lim, Backoff: backoff.Constant(time.Millisecond), Budget: recoil.NoBudget}
	n := 0
	err := recoil.Do(t.Context(), p, func(context.Context) error {
		n++
		if lim.InUse() != 1 {
			t.Errorf("attempt %d: limiter in use = %d, want 1", n, lim.InUse())
		}
		if n < 3 {
			return errors.New("502")
		}
		return nil
	})
	if err != nil || lim.InUse() != 0 {
		t.Errorf("Do() = %v, in use after = %d; want nil, 0", err, lim.InUse())
	}
}
