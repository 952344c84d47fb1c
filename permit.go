package recoil

import (
	"time"

	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
)

// This file is what one attempt takes and gives back. Before an attempt
// goes, the Call asks, in order, the policy's budget (to admit the call,
// or to pay for a retry or a hedge) and then the request's, a limiter slot,
// the policy's breaker, and the target's breaker and allowance. Each yes
// is written into the attempt's permit as it is given. An attempt that
// goes hands its permit to its outcome (settle), which records the outcome
// with everything the permit holds — against the target the attempt went
// to, whatever the call has done since; an attempt refused at any step
// gives back everything its permit holds (cancel). Nothing is undone
// anywhere else.

// A permit is what one attempt took. The zero permit holds nothing.
type permit struct {
	n      int          // the attempt's number, once it goes; 0 before
	start  time.Time    // when it went, if it is timed or a Quantile needs it; zero otherwise
	cost   int64        // the units its budgets were charged, when the call has a cost; 0 means one unit
	target int32        // the index of its target in the Fallback; -1 for none
	cause  budget.Cause // what the retry or hedge it is was priced at (CauseError for a first attempt)

	timed   bool // its latency is reported (the policy's limiter or a breaker wants it)
	slot    bool // holds a limiter slot
	probe   bool // the policy's breaker let it go: it owes the breaker an outcome
	tprobe  bool // its target's breaker let it go
	allowed bool // its target's allowance charged it
	budget  bool // the policy's budget charged it (a retry or hedge, or a first attempt by cost)
	request bool // the request's budget charged it
}

// reset makes pm the permit of an attempt about to be asked for, priced
// at k, holding nothing. It writes pm in place: a permit built aside and
// copied in is read back before its stores have landed, which stalls the
// processor on every attempt.
func (pm *permit) reset(k budget.Cause) {
	*pm = permit{}
	pm.target, pm.cause = -1, k
}

// holds reports whether pm holds anything cancel would give back.
func (pm *permit) holds() bool {
	return pm.slot || pm.probe || pm.tprobe || pm.allowed || pm.budget || pm.request
}

// cancel gives back everything pm holds for an attempt that did not go:
// the slot with no latency, the breakers' probes as ignored, and every
// budget's and allowance's charge. pm holds nothing afterwards.
func (c *Call) cancel(now time.Time, pm *permit) {
	p := c.p
	if pm.slot {
		p.Limiter.Release()
	}
	if pm.probe {
		p.Breaker.RecordAt(now, breaker.Ignored)
	}
	if pm.target >= 0 {
		t := &p.Fallback.Targets[pm.target]
		if pm.tprobe {
			t.Breaker.RecordAt(now, breaker.Ignored)
		}
		if pm.allowed {
			refund(t.Allowance, now, pm.cause, pm.cost)
		}
	}
	if pm.budget {
		refund(c.budget, now, pm.cause, pm.cost)
	}
	if pm.request {
		refund(c.request, now, pm.cause, pm.cost)
	}
	pm.reset(pm.cause)
}

// settle records the outcome of the attempt that held pm, which ended at
// now after running lat (-1: not timed, and for any permit not timed) in
// v (nil: a success; read, never kept). Its slot goes
// back with the latency, and its breakers, its target's allowance and the
// policy's budget hear the outcome: an abandoned or cancelled attempt (v's
// class ClassCanceled, or ignored) counts for nothing in any of them.
func (c *Call) settle(now time.Time, pm *permit, lat time.Duration, v *Verdict) {
	// A target's allowance charged every attempt that went to the target
	// (allowed): the first attempt pinned to the first target went only
	// because it has none.
	if pm.slot || pm.probe || pm.tprobe || pm.allowed || c.budget != nil {
		c.record(now, pm, lat, v)
	}
	pm.reset(0)
}

// record is settle for a permit that holds something, or whose outcome a
// target's allowance or the call's budget is to hear.
func (c *Call) record(now time.Time, pm *permit, lat time.Duration, v *Verdict) {
	p := c.p
	res, bo := budget.Success, breaker.Success
	if v != nil {
		res, bo = budgetResult(v.Class), breakerOutcome(v.Class)
	}
	if !pm.timed {
		lat = -1
	}
	if pm.slot {
		c.giveBack(now, lat, v)
	}
	if pm.probe {
		recordOutcome(p.Breaker, now, bo, lat)
	}
	if pm.target >= 0 {
		t := &p.Fallback.Targets[pm.target]
		if pm.tprobe {
			recordOutcome(t.Breaker, now, bo, lat)
		}
		if t.Allowance != nil {
			t.Allowance.RecordAt(now, budget.Outcome{Attempt: pm.n, Result: res, After: pm.cause})
		}
	}
	if c.budget != nil {
		c.budget.RecordAt(now, budget.Outcome{Attempt: pm.n, Result: res, After: pm.cause})
	}
}

// ignore is settle for an attempt that went and whose outcome counts for
// nothing: abandoned when another answered, or cancelled by its caller.
func (c *Call) ignore(now time.Time, pm *permit) {
	c.settle(now, pm, -1, &abandoned)
}

// abandoned is the verdict ignore settles with: a cancelled attempt's,
// which the budgets and breakers count for nothing.
var abandoned = Verdict{Class: ClassCanceled}

// A Refunder is a Budget that can give back a charge for an attempt that
// then did not go, as x/time/rate's Reservation.CancelAt does: the
// policy's budget when the request's refuses the retry it just paid for,
// a target's allowance when the hedge it paid for is refused further on.
// RefundAt gives back what RetryAt (n 0) or RetryNAt (n ≥ 1) charged for
// a retry priced at c. A CostBudget is refunded with SettleAt(now, n, 0)
// instead; a Budget that is neither keeps what it charged.
type Refunder interface {
	RefundAt(now time.Time, c budget.Cause, n int64)
}

// refund gives back to b what charge took from it for cause k and cost n.
func refund(b Budget, now time.Time, k budget.Cause, n int64) {
	switch b := b.(type) {
	case Refunder:
		b.RefundAt(now, k, n)
	case CostBudget:
		b.SettleAt(now, max(n, 1), 0)
	}
}

// charge asks b for a retry or hedge priced at k that costs n units (0:
// one unit, asked with RetryAt); a CostBudget is asked for n with
// RetryNAt. True means the attempt may go and b charged it.
func charge(b Budget, now time.Time, k budget.Cause, n int64) bool {
	if n > 0 {
		if cb, ok := b.(CostBudget); ok {
			return cb.RetryNAt(now, k, n)
		}
	}
	return b.RetryAt(now, k)
}

// admitCall asks b to admit a call's first attempt, which costs n units
// (0: one, asked with AdmitAt).
func admitCall(b Budget, now time.Time, n int64) bool {
	if n > 0 {
		if cb, ok := b.(CostBudget); ok {
			return cb.AdmitNAt(now, n)
		}
	}
	return b.AdmitAt(now)
}

// payRetry asks the policy's budget and then the request's to pay for the
// retry or hedge pm is for; the second refusing gives the first its charge
// back. It reports whether both paid.
func (c *Call) payRetry(now time.Time, pm *permit) bool {
	if c.budget != nil {
		if !charge(c.budget, now, pm.cause, pm.cost) {
			return false
		}
		pm.budget = true
	}
	if c.request != nil {
		if !charge(c.request, now, pm.cause, pm.cost) {
			if pm.budget {
				refund(c.budget, now, pm.cause, pm.cost)
				pm.budget = false
			}
			return false
		}
		pm.request = true
	}
	return true
}

// takeSlot takes a limiter slot for pm without waiting, for a retry (or
// hedge) or the call's first attempt; false when every slot is held.
func (c *Call) takeSlot(pm *permit, retry bool) bool {
	if c.p.Limiter == nil || pm.slot {
		return true
	}
	var ok bool
	if l, isP := c.p.Limiter.(PriorityLimiter); isP {
		ok = l.TryAcquireAs(c.priority(), retry)
	} else {
		ok = c.p.Limiter.TryAcquire()
	}
	pm.slot = ok
	return ok
}

// askBreaker asks the policy's breaker to let pm's attempt go.
func (c *Call) askBreaker(now time.Time, pm *permit) bool {
	if c.p.Breaker == nil {
		return true
	}
	pm.probe = c.p.Breaker.AllowAt(now)
	return pm.probe
}

// askTarget asks target i's breaker and allowance whether pm's attempt may
// go there at now; "" means it may, and pm holds what they gave, anything
// else is why not, with what they gave already given back. An allowance
// asked before the call's first attempt to the target admits the call;
// before a further one (first false), it prices the retry at pm's cause.
func (c *Call) askTarget(now time.Time, pm *permit, i int, first bool) string {
	t := &c.p.Fallback.Targets[i]
	if t.Breaker != nil {
		if !t.Breaker.AllowAt(now) {
			return whyOpen
		}
		pm.tprobe = true
	}
	pm.target = int32(i)
	if t.Allowance == nil {
		return ""
	}
	var ok bool
	if first {
		ok = admitCall(t.Allowance, now, pm.cost)
	} else {
		ok = charge(t.Allowance, now, pm.cause, pm.cost)
	}
	if ok {
		pm.allowed = true
		return ""
	}
	if pm.tprobe {
		t.Breaker.RecordAt(now, breaker.Ignored) // the probe it let through does not go
		pm.tprobe = false
	}
	pm.target = -1
	return WhyAllowance
}

// costOf is the cost of the call's attempts when the call's context
// carries one (WithCost) and some budget it asks can charge by cost; 0
// otherwise (one unit). The context is read only when a budget could use
// it.
func (c *Call) costOf() int64 {
	if c.ctx == nil || !c.costly() {
		return 0
	}
	n, _ := CostFrom(c.ctx)
	return n
}

// costly reports whether a budget the call asks charges by cost.
func (c *Call) costly() bool {
	if _, ok := c.budget.(CostBudget); ok {
		return true
	}
	if _, ok := c.request.(CostBudget); ok {
		return true
	}
	if f := c.p.Fallback; f != nil {
		for i := range f.Targets {
			if _, ok := f.Targets[i].Allowance.(CostBudget); ok {
				return true
			}
		}
	}
	return false
}
