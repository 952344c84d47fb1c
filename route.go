package recoil

import (
	"math"
	"time"
	"unsafe"
)

// route is a call's state under a Fallback or a Hedge: which target its
// attempts go to and what it did with each, and which attempts are in
// flight. A call has one only once its first attempt failed or was raced
// (Call.routed), so the common path never writes it, and it is not part
// of the Call: the simulator keeps a Call per call in flight and walks it
// on every event, so the Call stays small. A call Drive runs (and does not
// hedge) has its route beside it on the stack (driven), so a move asks
// neither the heap nor a pool for one; a hedged Drive's call lends its
// own, and a Call that Policy.Begin made allocates one.
type route struct {
	f       *Fallback // nil under a Hedge alone
	cur     int       // the target the call's attempts now go to; -1 before the first
	atLeast int       // the next target must declare at least this MaxContext; 0: any
	from    int       // the next target is searched for from here
	leg     int       // the index of cur's report
	admits  uint64    // the targets (of the first 64) whose allowance admitted the call
	n       int       // the reports made: own's first, then more's
	own     [3]report // room for a chain of three without the heap
	more    []report

	flight  []permit // the permits of the attempts in flight, under a Hedge (a hedged Drive's backing array is its pooled state's)
	hedges  int      // hedges started
	refused int      // hedges the budgets, limiter, breakers or allowance refused
	wasted  int      // attempts abandoned when another answered
	stay    bool     // the next attempt goes to cur again
}

// driven is a Call that Drive runs on its caller's stack, with room for
// its route beside it. The Call cannot hold a pointer to that route: what
// a Call holds is handed on to budgets, breakers and observers, so the
// compiler would move the route, and the Call with it, to the heap (with
// s.c.rt = &s.rt in drive, go build -gcflags=-m reports "moved to heap:
// s": an allocation per call). The Call finds the route instead at its
// fixed place after itself (route), which it knows is there by its beside
// flag; the route inside the Call would add its 208 bytes to every Call,
// which the simulator keeps per call in flight. Only drive makes a
// driven, and only through a pointer to its c is it used: a driven, or a
// Call with beside set, is never copied.
type driven struct {
	c  Call
	rt route
}

// report is a TargetReport as the route keeps it, its target by index:
// the names are looked up only when a Summary or an Error copies the
// reports out.
type report struct {
	target   int32
	attempts int32
	left     string
}

// route returns the call's route, nil before it has one.
func (c *Call) route() *route {
	switch {
	case !c.routed:
		return nil
	case c.beside:
		// The Call is the c of a driven: its rt follows it in the same
		// variable.
		return (*route)(unsafe.Add(unsafe.Pointer(c), unsafe.Offsetof(driven{}.rt)))
	}
	return c.rt
}

// makeRoute gives the call its route: the one beside it or lent to it,
// zero until then but for the flight's backing array a hedged Drive lends
// it, or else a new one.
func (c *Call) makeRoute() {
	if !c.beside && c.rt == nil {
		c.rt = new(route)
	}
	c.routed = true
	r := c.route()
	r.f, r.cur = c.p.Fallback, -1
	if c.quick {
		// The first attempt went to the first target with no route made.
		c.quick = false
		r.take(0)
	}
}

// take makes target i the one the call's attempts go to.
func (r *route) take(i int) {
	r.cur, r.from, r.leg = i, i+1, r.n
	r.add(i, 1, "")
	r.admits |= 1 << uint(i) // 0 from the 65th on: only the first 64 are kept (admitted)
}

// pass records that the call passed target i over, and why.
func (r *route) pass(i int, why string) { r.add(i, 0, why) }

// add appends target i's report, written in place: a struct built aside
// and copied in is read back before its stores have landed, which stalls
// the processor.
func (r *route) add(i, attempts int, left string) {
	var rp *report
	if r.n < len(r.own) {
		rp = &r.own[r.n]
	} else {
		r.more = append(r.more, report{})
		rp = &r.more[len(r.more)-1]
	}
	r.n++
	rp.target, rp.attempts, rp.left = int32(i), int32(attempts), left
}

// at returns report i.
func (r *route) at(i int) *report {
	if i < len(r.own) {
		return &r.own[i]
	}
	return &r.more[i-len(r.own)]
}

// cut drops the reports from the n-th on.
func (r *route) cut(n int) {
	r.n = n
	r.more = r.more[:max(n-len(r.own), 0)]
}

// reports returns a copy of the reports, named.
func (r *route) reports() []TargetReport {
	out := make([]TargetReport, r.n)
	for i := range out {
		rp := r.at(i)
		out[i] = TargetReport{Target: r.f.name(int(rp.target)), Attempts: int(rp.attempts), Left: rp.left}
	}
	return out
}

// chooseTarget picks the target of the attempt pm is for at now, asking
// its breaker and allowance into pm; false means no target may be used,
// with the reason the call stops for.
func (c *Call) chooseTarget(now time.Time, pm *permit) (bool, Reason) {
	r := c.route()
	f := r.f
	open, other := false, false
	if r.stay {
		r.stay = false
		why := c.askTarget(now, pm, r.cur, false)
		if why == "" {
			r.at(r.leg).attempts++
			return true, ReasonNone
		}
		c.refusedBy(now, r.cur, why)
		r.at(r.leg).left = why
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
				soonest, at, until = i, r.n, u
			}
			r.pass(i, WhyCooling)
			continue
		}
		var why string
		if t := &f.Targets[i]; t.Breaker == nil && t.Allowance == nil {
			pm.target = int32(i) // nothing to ask (askTarget's answer)
		} else {
			why = c.askTarget(now, pm, i, !r.admitted(i))
		}
		if why == "" {
			r.take(i)
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
			r.cut(at)
			r.take(soonest)
			return true, ReasonNone
		}
		c.refusedBy(now, soonest, why)
		r.at(at).left = WhyCooling + ", then " + why
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
	u := f.untils()
	for i := r.cur + 1; i < len(f.Targets); i++ {
		if f.Targets[i].MaxContext >= need && u[i].Load() != math.MaxInt64 {
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
	r.at(r.leg).left = why
	r.from = r.cur + 1
	if longer {
		r.atLeast = r.f.Targets[r.cur].MaxContext + 1
	}
}

// targetReports returns a copy of the call's target reports, for a
// Summary or an Error that outlives the route; nil without a Fallback.
func (c *Call) targetReports() []TargetReport {
	switch {
	case c.routed && c.route().f != nil:
		return c.route().reports()
	case c.quick:
		return []TargetReport{{Target: c.p.Fallback.name(0), Attempts: 1}}
	}
	return nil
}
