package recoil

import (
	"time"

	"github.com/recoil-go/recoil/budget"
)

// This file is admission: what an attempt must be given before it goes,
// written into its permit (permit.go). Next admits the call's next
// attempt, Hedge one beside those in flight.

// next is Next for both kinds of driver: block asks for stepAcquire, not a
// shed, when every limiter slot is held. It returns only the kind of step,
// leaving the attempt's deadline in c.cut and the call's end in c.final.
func (c *Call) next(now time.Time, block bool) StepKind {
	if c.done {
		return StepDone
	}
	p, pm := c.p, &c.cur
	if c.attempts > 0 && !c.deadline.IsZero() {
		if now = clock(now); !now.Before(c.deadline) {
			return c.end(now, ReasonDeadline, 0, nil)
		}
	}
	if !c.admitted {
		if c.budget != nil {
			pm.cost = c.costOf()
			if !admitCall(c.budget, now, pm.cost) {
				return c.end(now, ReasonBudget, 0, nil)
			}
			pm.budget = pm.cost > 0 // a first attempt is charged only by cost
		}
		c.admitted = true
	}
	if p.Limiter != nil && !c.takeSlot(pm, c.attempts > 0) {
		if block {
			return stepAcquire
		}
		return c.end(now, ReasonLimit, 0, nil)
	}
	if !c.askBreaker(now, pm) {
		return c.end(now, ReasonCircuitOpen, 0, nil)
	}
	if p.Fallback != nil {
		ok, r := true, ReasonNone
		switch {
		case c.routed:
			ok, r = c.chooseTarget(now, pm)
		case c.pinned && c.attempts == 0:
			// Made before the Call began (never under a Hedge), asking
			// nothing: it went to the first target.
			pm.target, c.quick = 0, true
		default:
			ok, r = c.pickTarget(now, pm)
		}
		if !ok {
			c.cancel(now, pm) // the policy's probe and the retry's charges go back
			return c.end(now, r, 0, nil)
		}
	}
	c.attempts++
	c.inFlight = true
	pm.n = c.attempts
	if pm.timed = c.timed; pm.timed || p.Hedge != nil && p.Hedge.Quantile > 0 {
		now = clock(now)
		pm.start = now
	}
	if p.Hedge != nil {
		if !c.routed {
			c.makeRoute()
		}
		r := c.route()
		r.flight = append(r.flight, *pm)
		pm.reset(0)
	}
	if !c.deadline.IsZero() || p.AttemptTimeout > 0 {
		c.cut = c.cutAt(now)
	} // else no attempt of the call is ever cut off: c.cut stays zero
	return StepAttempt
}

// pickTarget picks the target of the attempt pm is for, when the call
// has no route yet (next sends the attempt of a routed call by its route,
// and one made before the Call began, pinned, to the first target). A
// call's first attempt goes to the first target with no route made when
// that target is free and its breaker and allowance let it go — the path
// of a call that succeeds at once; any other attempt is routed.
func (c *Call) pickTarget(now time.Time, pm *permit) (bool, Reason) {
	if c.attempts == 0 && c.p.Hedge == nil {
		if c.p.Fallback.free(0, now) && c.askTarget(now, pm, 0, true) == "" {
			c.quick = true
			return true, ReasonNone
		}
	}
	c.makeRoute()
	return c.chooseTarget(now, pm)
}

// hedge is Hedge: the admission of an attempt beside those in flight.
func (c *Call) hedge(now time.Time) (Step, bool) {
	p, r := c.p, c.route()
	if c.HedgeAfter() == 0 {
		return Step{}, false
	}
	now = clock(now)
	if !c.deadline.IsZero() && c.deadline.Sub(now) < p.minAttempt() {
		return Step{}, false
	}
	var pm permit
	pm.reset(budget.CauseTimeout)
	pm.cost = c.costOf()
	ok := c.takeSlot(&pm, true) && c.askBreaker(now, &pm) &&
		(r.f == nil || c.askTarget(now, &pm, r.cur, false) == "") &&
		c.payRetry(now, &pm)
	if !ok {
		c.cancel(now, &pm)
		r.refused++
		return Step{}, false
	}
	c.attempts++
	r.hedges++
	pm.n = c.attempts
	if pm.timed = c.timed; pm.timed || p.Hedge.Quantile > 0 {
		pm.start = now
	}
	r.flight = append(r.flight, pm)
	if r.f != nil {
		r.at(r.leg).attempts++
	}
	return Step{Kind: StepAttempt, Attempt: c.attempts, Deadline: c.cutAt(now)}, true
}

// cutAt is when an attempt starting at now must be cut off: the sooner of
// its AttemptTimeout and the call's deadline; zero for never.
func (c *Call) cutAt(now time.Time) time.Time {
	cut := c.deadline
	if c.p.AttemptTimeout > 0 {
		if d := clock(now).Add(c.p.AttemptTimeout); cut.IsZero() || d.Before(cut) {
			cut = d
		}
	}
	return cut
}
