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
