package sim

import (
	"math/rand/v2"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/tools/internal/hist"
)

// call is one logical call: a client's, or a layer's call below on behalf
// of one of its jobs. It drives a real recoil.Call on virtual time.
type call struct {
	rc      recoil.Call
	rp      *recoil.Policy
	pol     *policy
	acct    *hop.Account // the hop protocol's account, nil when off
	start   int64
	gen     uint32
	target  int32
	owner   int32 // the job this call serves, or -1 for a client's call
	client  int32
	left    int32 // closed loop: calls still to make; -1 means unlimited
	ep      uint16
	last    uint8 // the last attempt's result
	out     bool  // an attempt is outstanding
	closed  bool  // a closed-loop caller's slot, kept between calls
	counted bool  // begun after the warmup
	again   bool  // a closed-loop caller's resubmission of a failed call
	mode    uint8 // how the call routes and races its attempts (modeRouted...); 0 for neither
	prior   int32 // the gateways' chain (modePerTarget): attempts made on the targets before this one
	task    int64 // when a closed-loop caller began the call it is resubmitting

	// The answer of the outstanding attempt, on its way (see answer).
	res   uint8
	leg   uint8 // the gateways' chain: the index of the target the call is on
	spent int32
	wait  int64

	// jit is a closed-loop caller's own jitter stream
	// (Scenario.JitterSource); nil means its policy's.
	jit *rand.Rand

	// own is a closed-loop caller's own policy, when it has one: kept in
	// the caller's slot, next to the call that uses it. It comes last, so
	// that the run loop need not load it when no caller has one.
	own recoil.Policy
}

type client struct {
	spec     *ClientSpec
	ep       uint16
	target   int32
	perNs    float64
	rnd      *rand.Rand
	pol      *policy
	rp       *recoil.Policy   // the first replica's
	rps      []*recoil.Policy // every replica's, when there are several
	next     int              // the replica the next open-loop call goes to
	start    sampler
	think    sampler
	resubmit sampler
	serial   *serial // its serialising transport, if it has one

	calls, ok, failed, attempts, throttled, resubmits int64
	reasons                                           [16]int64
	lat                                               hist.Hist
	// wonBreaker and wonBudget are the answers the calls an open breaker
	// or a spent budget stopped would likely have had (guardcost.go).
	wonBreaker, wonBudget float64

	// Of the calls that fell back or hedged (see route.go): how many
	// ended, the most attempts one made, and their hedges.
	routed, most, hedges, refusedHedges, wasted int64
}

// arrival begins an open-loop client's call and schedules the next.
func (w *world) arrival(id int32) {
	cl := &w.clients[id]
	rp := cl.rp
	if len(cl.rps) > 1 { // deal the calls to the replicas in turn
		rp = cl.rps[cl.next]
		cl.next = (cl.next + 1) % len(cl.rps)
	}
	ci := w.newCall(-1, id, cl.target, cl.pol, rp, cl.ep)
	if next := w.now + int64(cl.rnd.ExpFloat64()/cl.perNs); next < w.until {
		w.schedule(next, evArrival, id, 0)
	}
	w.begin(ci)
}

// newCall takes a call slot, keeping its generation counter.
func (w *world) newCall(owner, cli, target int32, pol *policy, rp *recoil.Policy, ep uint16) int32 {
	ci := w.calls.alloc()
	w.q.noRun = w.calls.n >= lookaheadCalls // see queue
	c := w.calls.get(ci)
	c.owner, c.client, c.target, c.pol, c.rp, c.ep, c.left = owner, cli, target, pol, rp, ep, -1
	c.acct, c.out, c.closed, c.counted, c.again, c.jit = nil, false, false, false, false, nil
	return ci
}

// begin starts a logical call and its first attempt.
func (w *world) begin(ci int32) {
	c := w.calls.get(ci)
	now := w.now
	c.start = now
	var parent *job
	if c.owner >= 0 {
		parent = w.jobs.get(c.owner)
	}
	w.engage(c)
	c.acct = nil
	if c.pol.hop > 0 {
		switch {
		case parent != nil && parent.acct != nil:
			c.acct = parent.acct // the account of the request this layer serves
		case parent != nil && parent.budget >= 0:
			parent.acct = hop.NewAccount(int(parent.budget))
			c.acct = parent.acct
		default: // an edge, or a caller that does not speak the protocol
			c.acct = hop.NewAccount(c.pol.hop)
			if parent != nil {
				parent.acct = c.acct
			}
		}
		c.rc.SetRequestBudget(c.acct)
	}
	if c.owner < 0 && !c.again {
		c.task = now
		c.counted = now >= w.warm
		if c.counted {
			w.clients[c.client].calls++
		}
	}
	c.again = false
	if c.mode = c.pol.mode; c.mode != 0 {
		w.beginRouted(ci, c)
	}
	w.attempt(ci)
}

// engage begins the call's recoil.Call now, under its caller's deadline
// (a layer's call) less the protocol's margin for the answer to travel
// back (hop.DefaultDeadlineMargin); the policy's Timeout, if any, comes
// off the same deadline.
func (w *world) engage(c *call) {
	var dl time.Time
	if c.owner >= 0 {
		if p := w.jobs.get(c.owner); p.deadline > 0 {
			dl = vt(max(p.deadline-int64(hop.DefaultDeadlineMargin), w.now+1))
		}
	}
	c.rc = c.rp.Begin(vt(w.now), dl)
	if c.jit != nil {
		c.rc.SetJitter(c.jit)
	}
}

// attempt does what the call's engine says next: send its next attempt, or
// end the call (a budget, breaker or limiter refused it, or its deadline
// passed).
func (w *world) attempt(ci int32) {
	c := w.calls.get(ci)
	s := c.rc.Next(vt(w.now))
	if s.Kind != recoil.StepAttempt {
		w.end(ci, false, reasonOf(s.Err))
		return
	}
	if c.mode == 0 {
		w.launch(ci, c, c.target, s.Attempt, s.Deadline)
		return
	}
	w.launch(ci, c, w.upstreamOf(c), s.Attempt, s.Deadline)
	if c.mode&modeHedged != 0 {
		w.arm(ci, c)
	}
}

// launch sends attempt n of call ci to service node, to be cut off at
// deadline (zero: never): a hedged call's attempt joins its flights.
func (w *world) launch(ci int32, c *call, node int32, n int, deadline time.Time) {
	now := w.now
	c.gen = (c.gen + 1) & genMask
	c.out = true
	if c.owner < 0 && c.counted {
		w.clients[c.client].attempts++
	}
	hedged := c.mode&modeHedged != 0
	var tmo int64
	if !deadline.IsZero() {
		tmo = deadline.Sub(epoch).Nanoseconds()
		kind := evTimeout
		if hedged {
			kind = evHTimeout
		}
		w.schedule(tmo, kind, ci, c.gen)
	}
	if hedged {
		h := w.hedgingOf(ci)
		h.fl = append(h.fl, flight{gen: c.gen, n: int32(n), node: node})
	}
	ji := w.jobs.alloc()
	j := w.jobs.get(ji)
	*j = job{call: ci, cgen: c.gen, node: node, ep: c.ep, budget: -1, hedged: hedged}
	j.gone = tmo
	if c.acct != nil {
		j.budget = int32(c.acct.Remaining())
		j.deadline = tmo
	}
	if w.serialSend(ci, ji) {
		return
	}
	nd := &w.nodes[node]
	switch {
	case nd.record:
		w.schedule(now+nd.latency.draw(w.rnd), evRead, ji, 0)
	case !nd.latency.zero():
		w.schedule(now+nd.latency.draw(w.rnd), evReach, ji, 0)
	default:
		w.reach(ji)
	}
}

func reasonOf(err error) recoil.Reason {
	if e, ok := err.(*recoil.Error); ok {
		return e.Reason
	}
	return recoil.ReasonNone
}

// verdictOf is how a careful transport classifies what came back.
func verdictOf(res uint8, wait int64) recoil.Verdict {
	switch res {
	case resThrottled:
		return recoil.Verdict{Class: recoil.ClassThrottled, Wait: time.Duration(wait), Code: "rate_limit", Reason: "over the organisation's allowance"}
	case resPermanent:
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: "invalid_request", Reason: "validator rejected the request"}
	case resFull, resRefused:
		return recoil.Verdict{Class: recoil.ClassOverloaded, Reason: "overloaded"}
	case resDown:
		return recoil.Verdict{Class: recoil.ClassTransient, Reason: "down"}
	case resDown503:
		return recoil.Verdict{Class: recoil.ClassOverloaded, Reason: "down"}
	case resTimeout:
		return recoil.Verdict{Class: recoil.ClassTransient, Timeout: true, Reason: "attempt timed out"}
	case resExpired:
		return recoil.Verdict{Class: recoil.ClassTransient, Timeout: true, Reason: "deadline exceeded"}
	case resConflict:
		return recoil.Verdict{Class: recoil.ClassTransient, Code: "conflict", Reason: "version changed"}
	case resNotFound:
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: "model_not_found", Reason: "model not found"}
	case resUnauthorized:
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: "invalid_api_key", Reason: "key refused"}
	case resQuota:
		// A 429 for a spent quota is permanent, as recoilhttp reads the
		// provider's body: waiting does not refill it.
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: "insufficient_quota", Reason: "quota exhausted"}
	default:
		return recoil.Verdict{Class: recoil.ClassTransient, Reason: resNames[res]}
	}
}

// result reports the outcome of the call's one attempt outstanding to its
// engine, and does what it says.
func (w *world) result(ci int32, res uint8, wait int64, spent int32) {
	c := w.calls.get(ci)
	c.out = false
	w.report(ci, c, 0, res, wait, spent)
}

// report gives the answer res of attempt n (0: the one attempt
// outstanding) of call ci to its engine — the retries spent below it to
// the hop account, a throttle to its client's count — and does what the
// engine says next: a success ends the call; after a failure, follow.
//
// The engine's Step goes straight into follow's arguments: returned to
// result with the success beside it and passed on from there, it was
// copied on the stack once more, in 16-byte moves that read the 8-byte
// stores of the engine's results. Without that copy an event took 0.92
// and 0.97 of the CPU time (two sets of 16 pairs in one process, 10,000
// callers).
func (w *world) report(ci int32, c *call, n int, res uint8, wait int64, spent int32) {
	c.last = res
	if c.acct != nil && spent > 0 {
		c.acct.Below(int(spent))
	}
	if c.owner < 0 && (res == resThrottled || res == resQuota) && c.counted {
		w.clients[c.client].throttled++
	}
	now := vt(w.now)
	switch {
	case res == resOK && n == 0:
		c.rc.Success(now)
		w.end(ci, true, recoil.ReasonNone)
	case res == resOK:
		c.rc.SuccessOf(now, n) // the others are abandoned: wasted
		w.end(ci, true, recoil.ReasonNone)
	case n == 0:
		w.follow(ci, c, c.rc.Fail(now, resErr[res], *c.pol.verdict(c.rp, res, wait)))
	default:
		w.follow(ci, c, c.rc.FailOf(now, n, resErr[res], *c.pol.verdict(c.rp, res, wait)))
	}
}

// follow does what the call's engine said after a failed attempt (report):
// end the call with its reason; for a hedged call, wait for the attempts
// still in flight, sending the next hedge at once if one is left (as gRFC
// A6 and recoil.Do do); or retry after the step's wait, leaving any hedges
// behind.
func (w *world) follow(ci int32, c *call, s recoil.Step) {
	switch s.Kind {
	case recoil.StepDone:
		w.end(ci, false, reasonOf(s.Err))
	case recoil.StepPending:
		w.hedge(ci, c)
	default:
		if c.mode&modeHedged != 0 {
			w.ground(ci) // the Call left the attempts in flight behind
		}
		w.schedule(w.now+int64(s.Wait), evAttempt, ci, 0)
	}
}

// end finishes a logical call: a layer's job carries on with its answer; a
// client counts it and, closed-loop, thinks and calls again.
func (w *world) end(ci int32, ok bool, reason recoil.Reason) {
	c := w.calls.get(ci)
	if c.mode != 0 && w.endRouted(ci, c, ok) {
		return // the gateways' chain goes on to its next target
	}
	if c.owner >= 0 {
		ji := c.owner
		j := w.jobs.get(ji)
		switch {
		case ok:
			j.res = resOK
		case reason == recoil.ReasonPermanent || c.last == resPermanent:
			j.res = resPermanent
		case reason == recoil.ReasonBudget || reason == recoil.ReasonCircuitOpen || reason == recoil.ReasonLimit,
			c.last == resThrottled || c.last == resFull || c.last == resRefused || c.last == resDown503:
			j.res = resRefused
		default:
			j.res = resUpstream
		}
		w.calls.release(ci)
		w.finish(ji)
		return
	}
	cl := &w.clients[c.client]
	if ok {
		w.nodes[cl.target].m.iDone++ // the time series covers the warmup too
	}
	if c.closed && !ok && !cl.resubmit.zero() {
		// The app begins the call again later; it is one call, still open.
		if c.counted {
			cl.resubmits++
			cl.reasons[reason&15]++
			w.priceGuard(cl, reason)
		}
		c.again = true
		w.schedule(w.now+cl.resubmit.draw(cl.rnd), evBegin, ci, 0)
		return
	}
	if c.counted {
		if ok {
			cl.ok++
		} else {
			cl.failed++
			cl.reasons[reason&15]++
			w.priceGuard(cl, reason)
		}
		start := c.start
		if c.closed {
			start = c.task
		}
		cl.lat.Add(time.Duration(w.now - start))
	}
	if !c.closed {
		w.calls.release(ci)
		return
	}
	if c.left > 0 {
		c.left--
	}
	if c.left != 0 {
		w.schedule(w.now+cl.think.draw(cl.rnd), evBegin, ci, 0)
	}
}
