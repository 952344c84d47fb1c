package sim

import (
	"cmp"
	"math/rand/v2"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// simSpec is a PolicySpec with what the simulator asks of it.
type simSpec struct{ *PolicySpec }

// stateless reports whether every instance of the policy behaves alike,
// so one can serve many callers: no budget and no breaker state.
func (ps simSpec) stateless() bool {
	return ps.Budget != nil && ps.Budget.Kind == policyspec.BudgetNone && ps.Breaker == nil && ps.Limit == 0 && ps.Limiter == nil &&
		ps.Fallback == nil && ps.Hedge == nil // a chain's cool-downs, a hedge's latencies
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
	spec           simSpec
	attemptTimeout time.Duration
	hop            int
	mode           uint8 // modeRouted, modePerTarget, modeHedged: how its calls are driven
	brooker        bool  // draw waits as Brooker's study did (SchedulesBrooker2015)
	// chain is the service each target of the spec's Fallback reaches, in
	// order; nil without one.
	chain []int32

	// verdicts[res] is what the policy's Verdict makes of the outcome res,
	// once asked (bit res of known). It depends on nothing else — the
	// error is resErr[res], the careful transport's verdict verdictOf's,
	// and Classify, the same in every recoil.Policy built from p, is a
	// function of the error alone — but for a 429, whose verdict carries
	// its Retry-After and is never kept. The engine is asked once per
	// outcome per run instead of at every failed attempt.
	verdicts [nRes]recoil.Verdict
	known    uint32
}

// verdict returns rp.Verdict(resErr[res], verdictOf(res, wait)); rp must
// have been built from p.
func (p *policy) verdict(rp *recoil.Policy, res uint8, wait int64) *recoil.Verdict {
	if p.known&(1<<res) == 0 {
		v := rp.Verdict(resErr[res], verdictOf(res, wait))
		if res == resThrottled {
			return &v
		}
		p.verdicts[res] = v
		p.known |= 1 << res
	}
	return &p.verdicts[res]
}

// compile compiles ps, whose fallback targets reach the services svc
// names (by index).
func compile(ps *PolicySpec, svc map[string]int32) *policy {
	p := &policy{spec: simSpec{ps}, hop: ps.Hop}
	if f := ps.Fallback; f != nil {
		p.mode |= modeRouted
		if f.PerTarget() {
			p.mode = modePerTarget
		}
		for i := range f.Targets {
			p.chain = append(p.chain, svc[f.Targets[i].UpstreamName()]) // validated
		}
	}
	if ps.Hedge != nil {
		p.mode |= modeHedged
	}
	return p
}

// newPolicy returns a fresh recoil.Policy for p (see PolicySpec.Policy).
func (p *policy) newPolicy(rnd *rand.Rand) *recoil.Policy {
	rp := new(recoil.Policy)
	p.build(rp, rnd)
	return rp
}

// build sets up a zero policy in place (a Policy must not be copied): as
// the spec says, with the classify modes reading the simulator's own
// outcomes, whose errors carry no Timeout method for the policy
// language's generic classifiers to find.
func (p *policy) build(rp *recoil.Policy, rnd *rand.Rand) {
	p.spec.Build(rp, rnd)
	switch p.spec.Classify {
	case policyspec.ClassifyRetryEverything:
		rp.Classify = retryEverything
	case policyspec.ClassifyTimeouts:
		rp.Classify = retryTimeoutsOnly
	}
	if p.attemptTimeout > 0 {
		rp.AttemptTimeout = p.attemptTimeout
	}
	if rp.Fallback != nil {
		// Each target's Value is the service it reaches, for attemptRouted.
		for i := range rp.Fallback.Targets {
			rp.Fallback.Targets[i].Value = upstream(p.chain[i])
		}
	}
	if p.brooker {
		rp.Backoff = brookerSchedule{cmp.Or[backoff.Schedule](rp.Backoff, recoil.DefaultBackoff())}
		rp.OverloadBackoff = brookerSchedule{cmp.Or[backoff.Schedule](rp.OverloadBackoff, recoil.DefaultOverloadBackoff())}
	}
}

// brookerSchedule draws a schedule's waits as the simulator of Brooker's
// study did (SchedulesBrooker2015): retry n's ceiling is recoil's ceiling
// for retry n+1, and decorrelated jitter is capped after the draw.
type brookerSchedule struct{ s backoff.Schedule }

// Delay implements backoff.Schedule.
func (b brookerSchedule) Delay(retry int, prev time.Duration, rnd backoff.Source) time.Duration {
	d, ok := b.s.(backoff.Decorrelated)
	if !ok {
		return b.s.Delay(retry+1, prev, rnd)
	}
	// uniform[base, 3·max(prev, base)] with no cap, then the cap.
	w := backoff.Decorrelated{Base: d.Base}.Delay(retry, prev, rnd)
	if d.Max > 0 {
		w = min(w, d.Max)
	}
	return w
}

// epoch is virtual time zero: a non-zero instant, since recoil reads a zero
// time.Time as "now".
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// epochUnix is epoch in Unix seconds (TestVT checks it), a constant so
// that vt's additions fold into one.
const epochUnix = 1767225600

// vt is the instant ns after epoch: the same time.Time as
// epoch.Add(time.Duration(ns)), built from its seconds and nanoseconds,
// which costs less than Add's overflow and monotonic-clock checks (the run
// loop makes one or two per event). ns is never negative (virtual time
// starts at zero), so it is divided unsigned: no corrections for the sign,
// and a remainder time.Unix need not normalise.
func vt(ns int64) time.Time {
	u := uint64(ns)
	return time.Unix(epochUnix+int64(u/1e9), int64(u%1e9)).UTC()
}
