// Package window is the sliding window of time slices that recoil's
// windowed counts live in: [Slots] slices, numbered by [SliceOf] from an
// origin the caller picks, and a [Ring] of two counters a slice, every
// counter one atomic word tagged with the slice it counts, so that counting,
// expiring a slice and summing the window take no lock and no timer.
//
// The Ratio and Adaptive retry budgets count in a Ring. The breaker's
// failure-rate window numbers its buckets the same way but packs both its
// counts and the tag into one word, because it needs only their ratio (see
// breaker/window.go for why and what it costs otherwise).
//
// A Ring knows nothing of time: its callers number the slices and decide
// what an instant that is late or far ahead means, which is where the
// breaker and the budgets differ (see each package's documentation). What
// is here is how a slice's counts are tagged, counted, recognised as
// expired, reused, taken back and summed.
package window

import "sync/atomic"

// Slots is how many slices a window is cut into. Finagle's leaky token
// bucket (com.twitter.finagle.util.TokenBucket.newLeakyBucket) keeps its
// deposits in a WindowedAdder of 10 slices; the breaker and the budgets do
// the same. A window of length L therefore remembers between 9/10·L and L
// of history, depending on how far into its newest slice the current
// instant is.
const Slots = 10

// A counter word packs the slice it counts (the slice number's low 32 bits,
// in the high half) with the count (the low half), so that one atomic
// operation both checks that the word still counts the slice and adds to
// it, and a stale word is recognised and reused without a lock. The slice
// number is kept to its low 32 bits, which is exact unless a slot goes
// unwritten for 2³²·10 slice widths while the window moves a little at a
// time (136 years at one-second slices).
const (
	countBits = 32
	countMask = 1<<countBits - 1
)

// MaxCount is the most one counter holds for one slice: 2³¹−1, so that the
// brief overshoot of concurrent additions can never carry into the tag.
// Add refuses to count past it and reports [Full].
const MaxCount = 1<<31 - 1

// Result is what [Ring.Add] did.
type Result uint8

const (
	// Added: the events were counted.
	Added Result = iota
	// Later: the slot holds a later slice than the one asked for (the
	// window has moved past it); nothing was counted.
	Later
	// Full: the counter already holds MaxCount events for the slice;
	// nothing was counted.
	Full
)

// Ring is [Slots] slices of two counters each. The zero Ring is empty. It
// is safe for concurrent use: every method is lock-free, and Add is one
// atomic load and one atomic add unless it must reuse an expired slot.
// A Ring must not be copied after first use.
type Ring struct {
	cells [Slots][2]atomic.Uint64
}

// Size is the size of a Ring in bytes, for callers that pad one to cache
// lines.
const Size = Slots * 2 * 8

func tagOf(k int64) uint64 { return uint64(uint32(k)) << countBits }

// slot maps a slice number, possibly negative, to its slot.
func slot(k int64) int { return int((k%Slots + Slots) % Slots) }

// Add counts n events, 1 ≤ n ≤ MaxCount, on counter c (0 or 1) in slice k.
// A slot that holds an expired slice (any earlier one) is taken over for k;
// one that holds a later slice is left alone, and Add reports [Later].
func (r *Ring) Add(k int64, c int, n uint64) Result {
	w := &r.cells[slot(k)][c]
	tag := tagOf(k)
	for {
		v := w.Load()
		switch {
		case v&^countMask == tag:
			nv := w.Add(n)
			if nv&^countMask == tag && nv&countMask <= MaxCount {
				return Added
			}
			// Past MaxCount, or the slot was taken over for a later slice
			// between the load and the add: take the events back out.
			w.Add(-n)
			if nv&^countMask == tag {
				return Full
			}
			return Later
		case int32(uint32(v>>countBits)-uint32(k)) > 0 && v&countMask != 0:
			return Later
		case w.CompareAndSwap(v, tag|n):
			return Added // an expired slice's slot, reused
		}
	}
}

// Undo takes back n events counted on counter c in slice k, unless the
// slice has expired since (taking them with it).
func (r *Ring) Undo(k int64, c int, n uint64) {
	w := &r.cells[slot(k)][c]
	tag := tagOf(k)
	for {
		v := w.Load()
		if v&^countMask != tag || v&countMask < n {
			return
		}
		if w.CompareAndSwap(v, v-n) {
			return
		}
	}
}

// Sum returns the totals of both counters over slices newest−(Slots−1)
// through newest, as they stand; concurrent additions may or may not be
// seen. It is 2·Slots atomic loads.
func (r *Ring) Sum(newest int64) (a, b int64) {
	// The oldest slice. Near math.MinInt64 the subtraction wraps, which
	// leaves the low 32 bits the tags use exact; its slot is found from
	// newest's (newest−9 ≡ newest+1 modulo 10) and stepped along.
	s := newest - (Slots - 1)
	i := (slot(newest) + 1) % Slots
	for range Slots { // counted, not s <= newest: newest may be math.MaxInt64
		c := &r.cells[i]
		tag := tagOf(s)
		s++
		if v := c[0].Load(); v&^countMask == tag {
			a += int64(v & countMask)
		}
		if v := c[1].Load(); v&^countMask == tag {
			b += int64(v & countMask)
		}
		if i++; i == Slots {
			i = 0
		}
	}
	return a, b
}

// Reset empties the ring. Additions concurrent with it may survive it.
func (r *Ring) Reset() {
	for i := range r.cells {
		r.cells[i][0].Store(0)
		r.cells[i][1].Store(0)
	}
}

// SliceOf is d/width rounded towards minus infinity: the number of the
// slice holding an instant d after the origin. width must be positive.
func SliceOf(d, width int64) int64 {
	q := d / width
	if d < 0 && d%width != 0 {
		q--
	}
	return q
}
