package sim

import "unsafe"

// Lookahead: the run loop prefetches the next event's call while it handles
// one, but one event ahead is too little once the calls outgrow the caches
// and the page tables' cache: with 100,000 callers (54 MB of calls) most
// events wait for their call. When the queue refills a small bucket, that
// bucket's events are the next few to come out (but for events scheduled
// meanwhile), so their calls can be loaded several events ahead.
const (
	// lookaheadBucket is the largest bucket whose calls are prefetched:
	// a larger one is further ahead, and its calls would be evicted again
	// before use.
	lookaheadBucket = 64
	// lookaheadCalls is the number of call slots from which the lookahead
	// pays: below it (10,000 callers, 5 MB) the calls mostly stay in the
	// cache and the extra prefetches cost more than they save.
	lookaheadCalls = 1 << 15
)

// lookahead starts loading the calls of the events a refill brought down
// (queue.refill's result), when it is worth it.
func (w *world) lookahead(next []event) {
	if len(next) > lookaheadBucket || w.calls.n < lookaheadCalls {
		return
	}
	for _, e := range next {
		switch e.kind() {
		case evAttempt, evReply, evTimeout, evBegin:
			prefetch(unsafe.Pointer(w.calls.get(int32(e.id))), w.callBytes)
		}
	}
}

// runAhead is how many events past the next the run loop prefetches the
// call of, when the events come out of the queue's run, whose order is
// known: the lookahead above covers the events a refill brings down, and
// a run's never are. Measured (thread CPU time, sequential pairs in one
// process, the run with and without this): at 100,000 callers, 4 ahead
// and 12 ahead each made the run's cost per event no different from the
// queue's without a run, where without them it was 1.05 times as long; at
// 10,000, 1 to 12 ahead measured 0.95–0.98. 8 lies between.
const runAhead = 8

// lookaheadRun starts loading the call of the event runAhead past the next
// in the queue's run, if there is one.
func (w *world) lookaheadRun() {
	r := w.q.run
	if len(r) <= runAhead {
		return
	}
	switch e := r[len(r)-1-runAhead]; e.kind() {
	case evAttempt, evReply, evTimeout, evBegin:
		prefetch(unsafe.Pointer(w.calls.get(int32(e.id))), w.callBytes)
	}
}
