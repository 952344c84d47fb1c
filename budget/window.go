package budget

import "time"

// slices is how many time slices a sliding window is cut into. Finagle's
// leaky token bucket (com.twitter.finagle.util.TokenBucket.newLeakyBucket)
// keeps its deposits in a WindowedAdder of 10 slices; Ratio and Adaptive do
// the same. A window of length L therefore remembers between 9/10·L and L of
// history, depending on how far into its newest slice the current instant is.
const slices = 10

// pair is two event counts kept per slice: for Ratio, requests and retries;
// for Adaptive, requests and accepts.
type pair struct{ a, b int64 }

// window is a ring of [slices] time slices with running totals. It is not
// safe for concurrent use; its owner holds a lock.
//
// Slice numbers count slice widths from origin, the first instant the window
// saw. Time is taken as given, never read here:
//   - an instant in the newest slice, or in one of the [slices]-1 slices
//     before it (time going backwards a little, as concurrent callers' clock
//     readings may), is recorded in the newest slice;
//   - an instant in one of the [slices]-1 slices after it advances the ring,
//     expiring the slices it passes over;
//   - an instant [slices] slices or more away in either direction (a
//     suspended process, a wall-clock step, a bogus time) starts the window
//     afresh.
//
// Arithmetic saturates (time.Time.Sub does) and the ring never moves more
// than [slices] steps per call, so no instant can panic or stall it.
type window struct {
	origin  time.Time
	started bool
	head    int64     // slice number of the newest slot
	lo, hi  time.Time // the newest slice is [lo, hi)
	slot    [slices]pair
	sum     pair
}

// at moves the window to now and returns the slot that events at now are
// counted in. width must be positive.
func (w *window) at(now time.Time, width time.Duration) *pair {
	if !now.Before(w.lo) && now.Before(w.hi) {
		// Still in the newest slice: two comparisons, cheaper than Sub,
		// which checks for overflow with an Add and an Equal.
		return &w.slot[ring(w.head)]
	}
	if !w.started {
		w.started, w.origin, w.head = true, now, 0
		w.lo, w.hi = now, now.Add(width)
		return &w.slot[0]
	}
	k := sliceOf(now.Sub(w.origin), width)
	defer w.bounds(width)
	switch {
	case k <= w.head && uint64(w.head-k) < slices:
		// Same slice, or a small step back: count it as the newest.
	case k > w.head && uint64(k-w.head) < slices:
		for s := w.head + 1; s <= k; s++ {
			p := &w.slot[ring(s)]
			w.sum.a -= p.a
			w.sum.b -= p.b
			*p = pair{}
		}
		w.head = k
	default:
		w.slot = [slices]pair{}
		w.sum = pair{}
		w.head = k
	}
	return &w.slot[ring(w.head)]
}

// bounds recomputes [lo, hi) after head moved. |head·width| is at most
// |now − origin|, so the product cannot overflow. Near the ends of time.Time's
// range hi may wrap below lo; then the fast path in at simply never applies.
func (w *window) bounds(width time.Duration) {
	w.lo = w.origin.Add(time.Duration(w.head) * width)
	w.hi = w.lo.Add(width)
}

// add counts da and db events at now.
func (w *window) add(now time.Time, width time.Duration, da, db int64) {
	p := w.at(now, width)
	p.a += da
	p.b += db
	w.sum.a += da
	w.sum.b += db
}

// sliceOf is d/width rounded towards minus infinity.
func sliceOf(d, width time.Duration) int64 {
	q := d / width
	if d < 0 && d%width != 0 {
		q--
	}
	return int64(q)
}

// ring maps a slice number, possibly negative, to its slot.
func ring(s int64) int {
	return int((s%slices + slices) % slices)
}

// sliceWidth is window/slices, at least one nanosecond: a window shorter
// than [slices] nanoseconds acts as one of [slices] nanoseconds.
func sliceWidth(window time.Duration) time.Duration {
	return max(window/slices, 1)
}
