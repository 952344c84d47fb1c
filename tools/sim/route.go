package sim

import (
	"slices"

	"github.com/recoil-go/recoil/hop"
)

// Calls that fall back or hedge. A call whose policy has neither is driven
// as caller.go says and never comes here: its cost per event is the plain
// path's. The others are driven on the same virtual time, with the same
// recoil.Call:
//
//   - Under a recoil.Fallback (modeRouted) each attempt goes to the
//     service of the target the Call picked for it (Call.Target, whose
//     Value is the service's index), and a failure the fallback rule moves
//     on from comes back from Fail as a wait of zero: the next attempt goes
//     at once, to the next service.
//   - Under the gateways' chain (modePerTarget, policyspec.RetriesPerTarget)
//     each target in turn gets a whole recoil.Call of its own, under the
//     policy, against its service; when that call fails, the next target's
//     begins at once, and the logical call ends with the last target's.
//     Nothing is remembered between logical calls. This is recoil's engine
//     run the way the LLM gateways nest their loops, not a recoil mode.
//   - Under a recoil.Hedge (modeHedged) a call may have several attempts in
//     flight, each a flight with a generation of its own: after each
//     attempt the call's hedge timer is armed for Call.HedgeAfter, and when
//     it fires with attempts still in flight, Call.Hedge(now) may start
//     another to the same service. Each attempt's answer is reported with
//     SuccessOf or FailOf; a success, or a failure that decides the call,
//     drops the others, which the Call counts as wasted. Dropped attempts
//     carry on at their service as any attempt whose caller stopped
//     waiting does: served for nobody (abandoned), or stopped by a service
//     that notices (CancelOnAbandon).

// Modes of a policy and its calls.
const (
	modeRouted    uint8 = 1 << iota // a recoil.Fallback picks each attempt's service
	modePerTarget                   // the gateways' chain: a call per target, in turn
	modeHedged                      // a recoil.Hedge races slow attempts
)

// upstream is a recoil.Target's Value in the simulator: the index of the
// service the target reaches.
type upstream int32

// flight is one attempt in flight of a hedged call.
type flight struct {
	gen  uint32 // its generation: its job's cgen, its events' gen
	n    int32  // its number, as the Call counts attempts
	node int32  // the service it went to
	// Its answer, once the service sent it (see hedgeAnswer).
	res   uint8
	spent int32
	wait  int64
}

// hedging is a hedged call's attempts in flight, kept by the call's index
// for as long as the slot is used.
type hedging struct {
	fl    []flight
	timer uint32 // the generation of the hedge timer armed last
}

// hedgingOf returns the attempts in flight of call ci.
func (w *world) hedgingOf(ci int32) *hedging {
	if int(ci) >= len(w.hedges) {
		w.hedges = append(w.hedges, make([]hedging, int(ci)+1-len(w.hedges))...)
	}
	return &w.hedges[ci]
}

// flying returns the index of call ci's flight of generation gen, or -1
// if it is not in flight.
func (w *world) flying(ci int32, gen uint32) int {
	if int(ci) >= len(w.hedges) {
		return -1
	}
	for i, f := range w.hedges[ci].fl {
		if f.gen == gen {
			return i
		}
	}
	return -1
}

// beginRouted sets a call that falls back or hedges up for its first
// attempt: the gateways' chain starts at its first target; a hedged call
// has nothing in flight.
func (w *world) beginRouted(ci int32, c *call) {
	c.leg, c.prior = 0, 0
	if c.mode&modePerTarget != 0 {
		c.target = c.pol.chain[0]
	}
	if c.mode&modeHedged != 0 {
		w.ground(ci)
	}
}

// upstreamOf is the service the call's next attempt goes to: its target's
// under a recoil.Fallback, else the call's own.
func (w *world) upstreamOf(c *call) int32 {
	if c.mode&modeRouted != 0 {
		if t := c.rc.Target(); t != nil {
			if u, ok := t.Value.(upstream); ok {
				return int32(u)
			}
		}
	}
	return c.target
}

// arm sets the hedged call's hedge timer for HedgeAfter from now, or
// leaves it unset when the call may start no hedge. The timer fires a
// nanosecond after the delay: an attempt is raced once it has run longer
// than the delay, and one answering at that very instant — a tie on
// virtual time, as when every answer takes the same time and so does the
// quantile of them — is not.
func (w *world) arm(ci int32, c *call) {
	after := c.rc.HedgeAfter()
	h := w.hedgingOf(ci)
	h.timer = (h.timer + 1) & genMask
	if after > 0 {
		w.schedule(w.now+int64(after)+1, evHedge, ci, h.timer)
	}
}

// hedgeDue: the hedge delay of call ci's timer gen has passed. If that is
// still the armed timer and attempts are still in flight, the Call is
// asked for a hedge; one it refuses is not asked for again while these
// attempts run (as recoil.Do does).
func (w *world) hedgeDue(ci int32, gen uint32) {
	if int(ci) >= len(w.hedges) {
		return
	}
	h := &w.hedges[ci]
	if h.timer != gen || len(h.fl) == 0 {
		return
	}
	w.hedge(ci, w.calls.get(ci))
}

// hedge asks call ci's Call for a hedge now and, if it grants one, sends
// it where the attempt it races went and arms the hedge timer again: when
// the hedge delay passed (hedgeDue), and at once when a failure leaves
// attempts in flight (follow).
func (w *world) hedge(ci int32, c *call) {
	if s, ok := c.rc.Hedge(vt(w.now)); ok {
		w.launch(ci, c, w.upstreamOf(c), s.Attempt, s.Deadline)
		w.arm(ci, c)
	}
}

// hedgeAnswer is answer for an attempt of a hedged call: the answer
// travels in the attempt's flight, arriving after d, and is dropped if
// the call no longer waits for it.
func (w *world) hedgeAnswer(ji int32, j *job, d int64) {
	ci, gen := j.call, j.cgen
	i := w.flying(ci, gen)
	if i >= 0 {
		f := &w.hedges[ci].fl[i]
		f.res, f.wait, f.spent = j.res, j.wait, j.spent
	}
	j.acct = nil
	w.jobs.release(ji)
	switch {
	case i < 0:
	case d > 0:
		w.schedule(w.now+d, evHReply, ci, gen)
	default:
		w.hedgeReply(ci, gen, false)
	}
}

// hedgeReply reports the answer of call ci's flight gen — or its timeout —
// to the Call, and does what the Call says (see report).
func (w *world) hedgeReply(ci int32, gen uint32, timedOut bool) {
	i := w.flying(ci, gen)
	if i < 0 {
		return // answered, timed out or dropped already
	}
	h := &w.hedges[ci]
	f := h.fl[i]
	h.fl = slices.Delete(h.fl, i, i+1)
	if timedOut {
		f.res, f.wait, f.spent = resTimeout, 0, 0
	}
	c := w.calls.get(ci)
	w.report(ci, c, int(f.n), f.res, f.wait, f.spent)
}

// ground drops every attempt of call ci still in flight, and its hedge
// timer.
func (w *world) ground(ci int32) {
	h := w.hedgingOf(ci)
	h.fl = h.fl[:0]
	h.timer = (h.timer + 1) & genMask
	w.calls.get(ci).out = false
}

// endRouted is end's first part for a call that falls back or hedges. The
// gateways' chain begins its next target's call when this one failed and a
// target remains, and reports true; otherwise the call is over, and what
// it did is counted for its client.
func (w *world) endRouted(ci int32, c *call, ok bool) bool {
	if c.mode&modeHedged != 0 {
		w.ground(ci)
	}
	if !ok && c.mode&modePerTarget != 0 && int(c.leg)+1 < len(c.pol.chain) && !w.parentGone(c) {
		w.tally(c, false)
		c.prior += int32(c.rc.Attempts())
		c.leg++
		c.target = c.pol.chain[c.leg]
		w.rebegin(ci, c)
		return true
	}
	w.tally(c, true)
	return false
}

// parentGone reports whether a layer's call is for a job whose caller's
// deadline has passed: no target's call could be of use to it.
func (w *world) parentGone(c *call) bool {
	if c.owner < 0 {
		return false
	}
	p := w.jobs.get(c.owner)
	return p.deadline > 0 && w.now >= p.deadline-int64(hop.DefaultDeadlineMargin)
}

// rebegin begins the gateways' call to the call's next target, at once,
// under the same caller's deadline and request budget: begin without the
// counting of a new logical call.
func (w *world) rebegin(ci int32, c *call) {
	w.engage(c)
	if c.acct != nil {
		c.rc.SetRequestBudget(c.acct)
	}
	w.attempt(ci)
}

// tally counts, for a client's call counted after the warmup, what the
// Call did: its hedges and, once the logical call is over, its attempts on
// every target.
func (w *world) tally(c *call, over bool) {
	if c.owner >= 0 || !c.counted {
		return
	}
	cl := &w.clients[c.client]
	if c.mode&modeHedged != 0 {
		s := c.rc.Summary(vt(w.now))
		cl.hedges += int64(s.Hedges)
		cl.refusedHedges += int64(s.RefusedHedges)
		cl.wasted += int64(s.Wasted)
	}
	if over {
		cl.routed++
		cl.most = max(cl.most, int64(c.prior)+int64(c.rc.Attempts()))
	}
}
