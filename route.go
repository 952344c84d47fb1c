package recoil

import (
	"math"
	"slices"
	"sync"
	"time"
)

// route is a call's state under a Fallback or a Hedge: which target its
// attempts go to and what it did with each, and which attempts are in
// flight. Only a call under one of them has one, and only once its first
// attempt failed or was raced, so the common path carries none of it.
type route struct {
	f       *Fallback // nil under a Hedge alone
	cur     int       // the target the call's attempts now go to; -1 before the first
	stay    bool      // the next attempt goes to cur again
	atLeast int       // the next target must declare at least this MaxContext; 0: any
	from    int       // the next target is searched for from here
	leg     int       // reports[leg] is cur's report
	admits  uint64    // the targets (of the first 64) whose allowance admitted the call
	reports []TargetReport
	own     [4]TargetReport

	flight  []permit  // the permits of the attempts in flight, under a Hedge
	hedges  int       // hedges started
	refused int       // hedges the budgets, limiter, breakers or allowance refused
	wasted  int       // attempts abandoned when another answered
	ownFl   [2]permit // flight's first backing array
}

// reset readies r for a call under f (nil under a Hedge alone). It sets
// each field rather than zeroing the whole route: its own arrays are
// written before they are read.
func (r *route) reset(f *Fallback) {
	r.f, r.cur, r.stay, r.atLeast, r.from, r.leg, r.admits = f, -1, false, 0, 0, 0, 0
	r.reports = r.own[:0]
	r.flight = r.ownFl[:0]
	r.hedges, r.refused, r.wasted = 0, 0, 0
}

// makeRoute gives the call its route: the one its driver lent it, one
// from the pool for a call Drive runs (so a move allocates nothing), or a
// new one.
func (c *Call) makeRoute() {
	var r *route
	switch {
	case c.lent != nil:
		r = c.lent
	case c.pooled:
		r = routes.Get().(*route)
	default:
		r = new(route)
	}
	r.reset(c.p.Fallback)
	c.route = r
	if c.quick {
		// The first attempt went to the first target with no route made.
		c.quick = false
		c.take(0)
	}
}

// routes are the routes of calls Drive runs, whose Call ends as Drive
// returns: nothing outlives it (Summary and Error copy the reports).
var routes = sync.Pool{New: func() any { return new(route) }}

// unroute returns a pooled route to the pool.
func (c *Call) unroute() {
	if c.route != nil && c.pooled {
		c.route.f = nil // the rest is reset when the route is taken again
		routes.Put(c.route)
		c.route = nil
	}
}

// take makes target i the one the call's attempts go to.
func (c *Call) take(i int) {
	r := c.route
	r.cur, r.from, r.leg = i, i+1, len(r.reports)
	r.report(i, 1, "")
	if i < 64 {
		r.admits |= 1 << i
	}
}

// pass records that the call passed target i over, and why.
func (r *route) pass(i int, why string) { r.report(i, 0, why) }

// report appends target i's report, written in place (see permit.reset).
func (r *route) report(i, attempts int, left string) {
	r.reports = append(r.reports, TargetReport{})
	rp := &r.reports[len(r.reports)-1]
	rp.Target, rp.Attempts, rp.Left = r.f.name(i), attempts, left
}

// chooseTarget picks the target of the attempt pm is for at now, asking
// its breaker and allowance into pm; false means no target may be used,
// with the reason the call stops for.
func (c *Call) chooseTarget(now time.Time, pm *permit) (bool, Reason) {
	r := c.route
	f := r.f
	open, other := false, false
	if r.stay {
		r.stay = false
		why := c.askTarget(now, pm, r.cur, false)
		if why == "" {
			r.reports[r.leg].Attempts++
			return true, ReasonNone
		}
		c.refusedBy(now, r.cur, why)
		r.reports[r.leg].Left = why
		r.from = r.cur + 1
		open, other = why == whyOpen, why != whyOpen
	}
	var nowNs int64 // read only once a target was ever cooled
	soonest, at, until := -1, 0, int64(0)
	for i := r.from; i < len(f.Targets); i++ {
		if f.Targets[i].MaxContext < r.atLeast {
			continue // too short for the request: not a candidate
		}
		u := f.untils()[i].Load()
		if u != 0 && u != math.MaxInt64 && nowNs == 0 {
			nowNs = clock(now).UnixNano()
		}
		switch {
		case u == math.MaxInt64:
			r.pass(i, WhyOut)
			other = true
			continue
		case u > nowNs:
			if soonest < 0 || u < until {
				soonest, at, until = i, len(r.reports), u
			}
			r.pass(i, WhyCooling)
			continue
		}
		why := c.askTarget(now, pm, i, !r.admitted(i))
		if why == "" {
			c.take(i)
			return true, ReasonNone
		}
		c.refusedBy(now, i, why)
		r.pass(i, why)
		open, other = open || why == whyOpen, other || why != whyOpen
	}
	// Every candidate is cooling down, out or refusing: the one that cools
	// soonest is tried rather than none. The targets passed over after it
	// are left to be considered again if the call moves on.
	if soonest >= 0 {
		why := c.askTarget(now, pm, soonest, !r.admitted(soonest))
		if why == "" {
			r.reports = r.reports[:at]
			c.take(soonest)
			return true, ReasonNone
		}
		c.refusedBy(now, soonest, why)
		r.reports[at].Left = WhyCooling + ", then " + why
		open, other = open || why == whyOpen, other || why != whyOpen
	}
	if open && !other {
		return false, ReasonCircuitOpen
	}
	return false, ReasonNoTarget
}

// admitted reports whether target i's allowance already admitted the call.
func (r *route) admitted(i int) bool {
	return i < 64 && r.admits&(1<<i) != 0
}

// refusedBy cools target i after its allowance refused an attempt of the
// call (not a hedge: see Call.Hedge), for the Fallback's cooldown.
func (c *Call) refusedBy(now time.Time, i int, why string) {
	if why == WhyAllowance {
		c.p.Fallback.cool(i, now, c.p.Fallback.cooldown())
	}
}

const whyOpen = WhyCircuitOpen

// free reports whether target i is neither cooling nor out at now (zero:
// read the clock if it is needed). The clock is read only for a target
// that was ever cooled, and one whose cool-down has passed is marked free
// again, so the next call needs no clock.
func (f *Fallback) free(i int, now time.Time) bool {
	if len(f.Targets) <= i {
		return false
	}
	u := f.untils()[i].Load()
	if u == 0 {
		return true
	}
	if u > clock(now).UnixNano() {
		return false
	}
	f.untils()[i].CompareAndSwap(u, 0)
	return true
}

// canMove reports whether a target after the current one may still take
// the call: not out until restored and, after a "context too long", one
// declaring a longer context. Breakers and allowances are asked only when
// the call gets there.
func (r *route) canMove(longer bool) bool {
	f := r.f
	need := r.atLeast
	if longer {
		need = f.Targets[r.cur].MaxContext + 1
	}
	for i := r.cur + 1; i < len(f.Targets); i++ {
		if f.Targets[i].MaxContext >= need && f.untils()[i].Load() != math.MaxInt64 {
			return true
		}
	}
	return false
}

// leave moves the call off its target after a failure, as a Leave with
// why and longer said.
func (r *route) leave(why string, longer bool) {
	if why == "" {
		why = WhyMovedOn
	}
	r.reports[r.leg].Left = why
	r.from = r.cur + 1
	if longer {
		r.atLeast = r.f.Targets[r.cur].MaxContext + 1
	}
}

// targetReports returns a copy of the call's target reports, for a
// Summary or an Error that outlives the route; nil without a Fallback.
func (c *Call) targetReports() []TargetReport {
	switch {
	case c.route != nil && c.route.f != nil:
		return slices.Clone(c.route.reports)
	case c.quick:
		return []TargetReport{{Target: c.p.Fallback.name(0), Attempts: 1}}
	}
	return nil
}
