package policyspec

import (
	"math/rand/v2"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/limit"
)

// Policy returns a new recoil.Policy as the spec describes (see Build).
// Each call returns a fresh policy, with its own budget, breaker and
// limiter state.
func (s *Spec) Policy(rnd *rand.Rand) *recoil.Policy {
	p := new(recoil.Policy)
	s.Build(p, rnd)
	return p
}

// Build sets up the zero policy p, in place, as the spec describes: every
// recoil.Policy field the spec has, with fresh budget, breaker and limiter
// state (a Fallback's cool-downs and its targets' breakers, a Hedge's
// latencies), and a Policy.Classify for the Classify mode. rnd, if not nil, is
// the policy's jitter source and the adaptive budget's; it must then not
// be shared by goroutines. Hop and IdleTimeout are not Policy fields: the
// driver reads them from the spec; nor is a Fallback that retries per
// target (Fallback.PerTarget), which leaves Policy.Fallback nil for the
// driver to run as it says. Build expects a valid spec (Validate).
func (s *Spec) Build(p *recoil.Policy, rnd *rand.Rand) {
	p.MaxAttempts, p.MaxServerWait, p.MinAttempt = s.MaxAttempts, s.MaxServerWait, s.MinAttempt
	p.Timeout, p.AttemptTimeout = s.Timeout, s.AttemptTimeout
	switch s.Classify {
	case ClassifyRetryEverything:
		p.Classify = retryEverything
	case ClassifyTimeouts:
		p.Classify = retryTimeoutsOnly
	}
	if rnd != nil {
		p.Rand = rnd
	}
	if s.Backoff != nil {
		p.Backoff = s.Backoff.Schedule()
	}
	if s.OverloadBackoff != nil {
		p.OverloadBackoff = s.OverloadBackoff.Schedule()
	}
	if s.Budget != nil {
		p.Budget = s.Budget.New(rnd)
	}
	if s.Breaker != nil {
		p.Breaker = s.Breaker.New()
	}
	if s.Limit > 0 {
		p.Limiter = limit.Must(limit.New(limit.Config{Capacity: s.Limit})) // checked: 0 ≤ Limit
	}
	if s.Limiter != nil {
		p.Limiter = s.Limiter.New()
	}
	p.Priority = priority(s.Priority)
	if s.Fallback != nil {
		p.Fallback = s.Fallback.New()
	}
	if s.Hedge != nil {
		p.Hedge = s.Hedge.New()
	}
}

// Schedule returns the backoff.Schedule the spec describes.
func (b *Backoff) Schedule() backoff.Schedule {
	switch b.Kind {
	case BackoffConstant:
		return backoff.Constant(b.Base)
	case BackoffExponential:
		return backoff.Exponential{Base: b.Base, Multiplier: b.Multiplier, Max: b.Max}
	case BackoffFullJitter:
		return backoff.FullJitter{Base: b.Base, Multiplier: b.Multiplier, Max: b.Max}
	case BackoffEqualJitter:
		return backoff.EqualJitter{Base: b.Base, Multiplier: b.Multiplier, Max: b.Max}
	case BackoffDecorrelated:
		return backoff.Decorrelated{Base: b.Base, Max: b.Max}
	case BackoffProportional:
		return backoff.Proportional{Base: b.Base, Multiplier: b.Multiplier, Jitter: b.Jitter, Max: b.Max}
	default:
		return backoff.None{}
	}
}

// New returns a new recoil.Budget as the spec describes; nil for
// BudgetDefault, which a recoil.Policy reads as its own budget.Share. rnd,
// if not nil, feeds the adaptive throttle's draws. It panics if the spec
// does not pass its check, which refuses what package budget refuses.
func (b *Budget) New(rnd *rand.Rand) recoil.Budget {
	bu, err := b.build(rnd)
	if err != nil {
		panic(err)
	}
	return bu
}

// build returns the budget the spec describes, or the error of the
// package budget constructor that refuses it.
func (b *Budget) build(rnd *rand.Rand) (recoil.Budget, error) {
	switch b.kind() {
	case BudgetNone:
		return recoil.NoBudget, nil
	case BudgetShare:
		return budget.NewShare(budget.ShareConfig{Percent: b.Percent, Reserve: b.Reserve})
	case BudgetTokenBucket:
		return budget.NewTokenBucket(budget.TokenBucketConfig{MaxTokens: b.MaxTokens, TokenRatio: b.TokenRatio})
	case BudgetRatio:
		return budget.NewRatio(budget.RatioConfig{TTL: b.TTL, MinRetriesPerSec: b.MinRetriesPerSec, Percent: b.Percent})
	case BudgetQuota:
		return budget.NewQuota(budget.QuotaConfig{Capacity: b.Capacity, RetryCost: b.RetryCost,
			TimeoutCost: b.TimeoutCost, ThrottleCost: b.ThrottleCost, NoRetryIncrement: b.NoRetryIncrement})
	case BudgetAdaptive:
		c := budget.AdaptiveConfig{K: b.K, Window: b.Window}
		if rnd != nil {
			c.Rand = rnd
		}
		return budget.NewAdaptive(c)
	default:
		return nil, nil
	}
}

// New returns a new breaker.Breaker as the spec describes. It panics if the
// spec does not pass its check, which refuses what package breaker refuses.
func (b *Breaker) New() *breaker.Breaker {
	return breaker.Must(b.build())
}

// build returns the breaker the spec describes, or breaker.New's error.
func (b *Breaker) build() (*breaker.Breaker, error) {
	return breaker.New(breaker.Settings{
		ConsecutiveFailures: b.ConsecutiveFailures, OpenDuration: b.Open,
		FailureRate: b.FailureRate, Window: b.Window, MinRequests: b.MinRequests,
		MaxProbes: b.MaxProbes, SuccessThreshold: b.SuccessThreshold,
		SlowCallRate: b.SlowCallRate, SlowCallThreshold: b.SlowCallThreshold,
	})
}

// retryEverything is the Policy.Classify of ClassifyRetryEverything: every
// failure is transient, retried on the policy's own schedule whatever it
// was — a 400, a 429 and its Retry-After, a 503 — as the wrapper that
// retries anything that is not a 2xx does. Cancellation is still never
// retried, and a timeout is still marked as one (for budgets that price
// timeouts apart).
func retryEverything(err error) recoil.Verdict {
	v := recoil.Classify(err, recoil.ClassTransient)
	if v.Class == recoil.ClassCanceled {
		return v
	}
	return recoil.Verdict{Class: recoil.ClassTransient, Timeout: v.Timeout, Reason: "retried whatever failed (classify: retry-everything)"}
}

// retryTimeoutsOnly is the Policy.Classify of ClassifyTimeouts: the
// caller's own timeouts are left to the driver's rules (a timed-out
// attempt is transient), and every other failure — an answer of any kind —
// is permanent.
func retryTimeoutsOnly(err error) recoil.Verdict {
	v := recoil.Classify(err, recoil.ClassUnknown)
	if v.Timeout || v.Class == recoil.ClassCanceled {
		return recoil.Verdict{} // no opinion
	}
	return recoil.Verdict{Class: recoil.ClassPermanent, Reason: "an answer, not a timeout (classify: timeouts)"}
}
