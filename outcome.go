package recoil

import (
	"slices"
	"time"

	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
)

// This file is what a Call does with an attempt's outcome: the attempt's
// permit settles it (against the target the attempt went to), and a
// failure is decided — by the Fallback's rule, then Decide, then the
// budgets, which are charged here and nowhere else.

// landing returns attempt n's permit, in place; nil if n is not in
// flight (it was abandoned).
func (c *Call) landing(n int) *permit {
	if c.p.Hedge != nil && c.routed {
		r := c.route()
		for i := range r.flight {
			if r.flight[i].n == n {
				return &r.flight[i]
			}
		}
		return nil
	}
	if c.inFlight && c.cur.n == n {
		return &c.cur
	}
	return nil
}

// landed takes the permit pm, just settled, out of those in flight.
// Small enough to inline: pm is c.cur but under a Hedge.
func (c *Call) landed(pm *permit) {
	if pm == &c.cur {
		c.inFlight = false
		return
	}
	c.landedFlight(pm)
}

// landedFlight is landed for a hedged call's permit.
func (c *Call) landedFlight(pm *permit) {
	r := c.route()
	for i := range r.flight {
		if &r.flight[i] == pm {
			r.flight = slices.Delete(r.flight, i, i+1)
			break
		}
	}
	c.inFlight = len(r.flight) > 0
}

// took reports how long the attempt holding pm ran until now, when the
// policy times attempts or a Quantile needs it; -1 otherwise, and for a
// cancelled attempt (v's class ClassCanceled).
func (c *Call) took(now time.Time, pm *permit, v *Verdict) time.Duration {
	if pm.start.IsZero() {
		return -1
	}
	return c.ran(now, pm, v)
}

// ran is took for a permit with a start.
func (c *Call) ran(now time.Time, pm *permit, v *Verdict) time.Duration {
	if v != nil && c.p.class(v.Class) == ClassCanceled {
		return -1
	}
	return max(clock(now).Sub(pm.start), 0)
}

// succeed is Success for attempt n.
func (c *Call) succeed(now time.Time, n int) {
	p := c.p
	pm := c.landing(n)
	if pm == nil {
		return
	}
	lat := c.took(now, pm, nil)
	if lat >= 0 && p.Hedge != nil {
		p.Hedge.ObserveTarget(max(int(pm.target), 0), lat)
	}
	t := int(pm.target)
	c.settle(now, pm, lat, nil)
	c.landed(pm)
	if p.OnAttempt != nil {
		p.OnAttempt(c.context(), AttemptEvent{Attempt: n, Target: c.targetName(t)})
	}
	c.leaveFlights(now, "another attempt answered first", nil, ReasonNone)
	c.finish(now, ReasonNone, nil)
}

// fail is FailOf with the verdict by reference, and the step as the wait
// and its kind: StepWait to retry after it, StepPending, or StepDone.
func (c *Call) fail(now time.Time, n int, err error, v *Verdict) (time.Duration, StepKind) {
	p := c.p
	pm := c.landing(n)
	if pm == nil || c.done {
		if c.done {
			return 0, StepDone
		}
		return 0, StepPending // an attempt the call left behind decides nothing
	}
	t := int(pm.target)
	c.settle(now, pm, c.took(now, pm, v), v)
	c.landed(pm)
	if c.quick {
		c.makeRoute() // the first attempt went out with no route: make it now
	}
	c.last, c.err = *v, err
	if c.inFlight && p.class(v.Class).Retryable() && (c.deadline.IsZero() || clock(now).Before(c.deadline)) {
		// Hedges are in flight: a retryable failure waits for them.
		if p.OnAttempt != nil {
			p.OnAttempt(c.context(), AttemptEvent{Attempt: n, Err: err, Verdict: *v, Target: c.targetName(t)})
		}
		return 0, StepPending
	}
	d, left := c.decide(now, t, v)
	if p.OnAttempt != nil {
		p.OnAttempt(c.context(), AttemptEvent{Attempt: n, Err: err, Verdict: *v, Retry: d.Retry, Wait: d.Wait, Reason: d.Reason,
			Target: c.targetName(t), Left: left})
	}
	// Hedges still in flight are left behind, whatever was decided.
	c.leaveFlights(now, "another attempt decided the call", nil, ReasonNone)
	if !d.Retry {
		c.end(now, d.Reason, d.Wait, nil)
		return 0, StepDone
	}
	if r := c.route(); r != nil && r.f != nil && left == "" {
		r.stay = true // the retry goes to the same target
	}
	c.prev = d.Wait
	c.waited += d.Wait
	return d.Wait, StepWait
}

// decide decides the call after the failure v of an attempt to target t
// (-1: none): the deadline first, then the Fallback's rule, then Decide
// and the budgets. A retry it allows is paid for in c.cur, the next
// attempt's permit. left is why the call leaves t, when it does.
//
// The rule (not asked about a cancelled attempt) cools t as it says and,
// when it moves the call and a target remains, the move is decided;
// a failure it does not move on is decided as without a Fallback. The rule
// is called once through one function value, whichever it is: two calls
// assigning one Leave would zero it and copy each answer in.
func (c *Call) decide(now time.Time, t int, v *Verdict) (d Decision, left string) {
	p := c.p
	if !c.deadline.IsZero() {
		// The deadline rule needs the time; nothing else here does.
		if now = clock(now); !now.Before(c.deadline) {
			return Decision{Reason: ReasonDeadline}, ""
		}
	}
	c.cur.reset(cause(v.Timeout, p.class(v.Class)))
	if r := c.route(); r != nil && r.f != nil && t >= 0 && p.class(v.Class) != ClassCanceled {
		rule := r.f.Rule
		if rule == nil {
			rule = r.f.defaultRule
		}
		lv := rule(*v, r.f.cooldown())
		if lv.Cool != 0 {
			r.f.cool(t, now, lv.Cool)
		}
		if t == r.cur && lv.Move && r.canMove(lv.Longer) {
			// The move, at once, but like any retry within MaxAttempts,
			// the deadline and the budgets. A refused move stops the call
			// where it is, for the reason it was refused.
			switch {
			case c.attempts >= p.maxAttempts():
				d.Reason = ReasonAttempts
			case !c.deadline.IsZero() && c.deadline.Sub(now) < p.minAttempt():
				d.Reason = ReasonDeadline
			case !c.pay(now):
				d.Reason = ReasonBudget
			default:
				d.Retry = true
				r.leave(lv.Why, lv.Longer)
				left = r.at(r.leg).left
			}
			return d, left
		}
	}
	if c.jitters {
		// Looked for only when a wait is decided: a call that succeeds
		// or moves never walks the context for it.
		c.jitters = false
		c.rnd = jitterOf(c.context(), c.rnd)
	}
	d = p.decide(c.attempts, v, now, c.deadline, c.prev, c.rnd)
	if d.Retry && !c.pay(now) {
		d = Decision{Reason: ReasonBudget}
	}
	return d, ""
}

// pay asks the budgets to pay for the retry c.cur is for. Small enough to
// inline: a call with no budget asks nothing.
func (c *Call) pay(now time.Time) bool {
	return c.budget == nil && c.request == nil || c.payCur(now)
}

// payCur is pay for a call with a budget.
func (c *Call) payCur(now time.Time) bool {
	c.cur.cost = c.costOf()
	return c.payRetry(now, &c.cur)
}

// leaveFlights gives up the attempts still in flight, for why: each counts
// for nothing in the budgets and breakers and reaches OnAttempt as
// canceled with reason r, with cause as its error (ErrAbandoned when nil);
// unless the caller gave up (ReasonCanceled), each is wasted work.
func (c *Call) leaveFlights(now time.Time, why string, cause error, r Reason) {
	if c.inFlight {
		c.leaveAll(now, why, cause, r)
	}
}

// leaveAll is leaveFlights with attempts in flight.
func (c *Call) leaveAll(now time.Time, why string, cause error, r Reason) {
	c.inFlight = false
	if cause == nil {
		cause = ErrAbandoned
	}
	if ro := c.route(); ro != nil && c.p.Hedge != nil {
		for i := range ro.flight {
			c.leaveFlight(now, &ro.flight[i], why, cause, r)
			if r != ReasonCanceled {
				ro.wasted++
			}
		}
		ro.flight = ro.flight[:0]
		return
	}
	c.leaveFlight(now, &c.cur, why, cause, r)
	c.cur.reset(0)
}

// leaveFlight gives up the attempt holding pm (see leaveFlights).
func (c *Call) leaveFlight(now time.Time, pm *permit, why string, cause error, r Reason) {
	n, t := pm.n, int(pm.target)
	c.ignore(now, pm)
	if c.p.OnAttempt != nil {
		// The attempt was sent: an observer counting attempts counts it,
		// as canceled.
		c.p.OnAttempt(c.context(), AttemptEvent{Attempt: n, Err: cause,
			Verdict: Verdict{Class: ClassCanceled, Reason: why}, Reason: r, Target: c.targetName(t)})
	}
}

// cause is what a budget prices a retry after a failure of class c at,
// timeout telling whether it timed out.
func cause(timeout bool, c Class) budget.Cause {
	switch {
	case timeout:
		return budget.CauseTimeout
	case c == ClassThrottled || c == ClassOverloaded:
		return budget.CauseThrottle
	}
	return budget.CauseError
}

func budgetResult(c Class) budget.Result {
	switch c {
	case ClassThrottled, ClassOverloaded:
		return budget.Overload
	case ClassPermanent:
		return budget.Permanent
	case ClassCanceled:
		return budget.Ignored
	default:
		return budget.Failure
	}
}

// breakerOutcome: a permanent failure means the dependency answered, so it
// counts as a success; a throttled one is about the caller's allowance, not
// the dependency's health, so it counts for nothing; cancellation likewise.
func breakerOutcome(c Class) breaker.Outcome {
	switch c {
	case ClassPermanent:
		return breaker.Success
	case ClassThrottled, ClassCanceled:
		return breaker.Ignored
	default:
		return breaker.Failure
	}
}
