package sim

import (
	"math/rand/v2"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/limit"
)

// Schedule returns the backoff.Schedule the spec describes.
func (b *BackoffSpec) Schedule() backoff.Schedule {
	switch b.Kind {
	case BackoffConstant:
		return backoff.Constant(b.Base)
	case BackoffExponential:
		return backoff.Exponential{Base: b.Base, Multiplier: b.Multiplier, Max: b.Cap}
	case BackoffFull:
		return backoff.FullJitter{Base: b.Base, Multiplier: b.Multiplier, Max: b.Cap}
	case BackoffEqual:
		return backoff.EqualJitter{Base: b.Base, Multiplier: b.Multiplier, Max: b.Cap}
	case BackoffDecorrelated:
		return backoff.Decorrelated{Base: b.Base, Max: b.Cap}
	case BackoffProportional:
		return backoff.Proportional{Base: b.Base, Multiplier: b.Multiplier, Jitter: b.Jitter, Max: b.Cap}
	default:
		return backoff.None{}
	}
}

// Budget returns the recoil.Budget the spec describes; nil means the
// policy's own default token bucket. rnd feeds the adaptive throttle's draws.
func (b *BudgetSpec) Budget(rnd *rand.Rand) recoil.Budget {
	switch b.Kind {
	case BudgetNone:
		return recoil.NoBudget
	case BudgetToken:
		return budget.NewTokenBucket(budget.TokenBucketConfig{MaxTokens: b.Tokens, TokenRatio: b.Ratio})
	case BudgetRatio:
		return budget.NewRatio(budget.RatioConfig{TTL: b.TTL, MinRetriesPerSec: b.MinPerSec, Percent: b.Percent})
	case BudgetQuota:
		return budget.NewQuota(budget.QuotaConfig{Capacity: b.Capacity, RetryCost: b.RetryCost, TimeoutCost: b.TimeoutCost, ThrottleCost: b.ThrottleCost})
	case BudgetAdaptive:
		c := budget.AdaptiveConfig{K: b.K, Window: b.Window}
		if rnd != nil {
			c.Rand = rnd
		}
		return budget.NewAdaptive(c)
	default:
		return nil
	}
}

// Policy returns a new recoil.Policy as the spec describes, drawing its
// jitter from rnd. Each call returns a fresh policy, with its own budget and
// breaker state.
func (ps *PolicySpec) Policy(rnd *rand.Rand) *recoil.Policy {
	p := new(recoil.Policy)
	ps.build(p, rnd)
	return p
}

// build sets up a zero policy in place (a Policy must not be copied).
func (ps *PolicySpec) build(p *recoil.Policy, rnd *rand.Rand) {
	p.MaxAttempts, p.MaxServerWait = ps.Attempts, ps.MaxServerWait
	p.Timeout, p.AttemptTimeout = ps.Timeout, ps.AttemptTimeout
	switch ps.Classify {
	case ClassifyAll:
		p.Classify = retryEverything
	case ClassifyTimeouts:
		p.Classify = retryTimeoutsOnly
	}
	if rnd != nil {
		p.Rand = rnd
	}
	if ps.Backoff != nil {
		p.Backoff = ps.Backoff.Schedule()
	}
	if ps.OverloadBackoff != nil {
		p.OverloadBackoff = ps.OverloadBackoff.Schedule()
	}
	if ps.Budget != nil {
		p.Budget = ps.Budget.Budget(rnd)
	}
	if ps.Limit > 0 {
		p.Limiter = limit.New(limit.Config{Capacity: ps.Limit})
	}
	if b := ps.Breaker; b != nil {
		p.Breaker = breaker.New(breaker.Settings{
			ConsecutiveFailures: b.Failures, OpenDuration: b.Open,
			FailureRate: b.FailureRate, Window: b.Window, MinRequests: b.MinRequests,
		})
	}
}

// stateless reports whether every instance of the policy behaves alike,
// so one can serve many callers: no budget and no breaker state.
func (ps *PolicySpec) stateless() bool {
	return ps.Budget != nil && ps.Budget.Kind == BudgetNone && ps.Breaker == nil && ps.Limit == 0
}

// retryEverything is the retry rule "anything that is not a 2xx": every
// failure is transient, retried on the policy's own schedule, ignoring
// Retry-After.
func retryEverything(err error) recoil.Verdict {
	return recoil.Verdict{Class: recoil.ClassTransient, Timeout: timedOut(err), Reason: "not a 2xx"}
}

// retryTimeoutsOnly retries the caller's own timeouts and nothing else: an
// answer of any kind is final.
func retryTimeoutsOnly(err error) recoil.Verdict {
	if timedOut(err) {
		return recoil.Verdict{} // no opinion: the service's verdict says timeout
	}
	return recoil.Verdict{Class: recoil.ClassPermanent, Reason: "answered"}
}

func timedOut(err error) bool { return err == resErr[resTimeout] || err == resErr[resExpired] }

// policy is a PolicySpec as one client or service uses it: an upstream
// timeout of its own (attemptTimeout, when set) replaces the spec's
// AttemptTimeout; hop is the edge's hop budget.
type policy struct {
	spec           *PolicySpec
	attemptTimeout time.Duration
	hop            int
}

func compile(ps *PolicySpec) *policy {
	return &policy{spec: ps, hop: ps.Hop}
}

// newPolicy returns a fresh recoil.Policy for p (see PolicySpec.Policy).
func (p *policy) newPolicy(rnd *rand.Rand) *recoil.Policy {
	rp := new(recoil.Policy)
	p.build(rp, rnd)
	return rp
}

// build sets up a zero policy in place.
func (p *policy) build(rp *recoil.Policy, rnd *rand.Rand) {
	p.spec.build(rp, rnd)
	if p.attemptTimeout > 0 {
		rp.AttemptTimeout = p.attemptTimeout
	}
}

// epoch is virtual time zero: a non-zero instant, since recoil reads a zero
// time.Time as "now".
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func vt(ns int64) time.Time { return epoch.Add(time.Duration(ns)) }
