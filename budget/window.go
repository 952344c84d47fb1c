package budget

import (
	"sync"
	"sync/atomic"
	"time"
)

// slices is how many time slices a sliding window is cut into. Finagle's
// leaky token bucket (com.twitter.finagle.util.TokenBucket.newLeakyBucket)
// keeps its deposits in a WindowedAdder of 10 slices; Ratio and Adaptive do
// the same. A window of length L therefore remembers between 9/10·L and L of
// history, depending on how far into its newest slice the current instant is.
const slices = 10

// Which of a window's two counters an event goes to: for Ratio, requests and
// retries; for Adaptive, requests and accepts.
const (
	counterA = 0
	counterB = 1
)

// A cell word packs the slice a count belongs to (its low 32 bits, in the
// high half) with the count (the low half), so that one atomic operation
// both checks that a cell still holds the slice and adds to it, and a stale
// cell is recognised and reused without a lock.
const (
	countBits = 32
	countMask = 1<<countBits - 1
)

func tagOf(slice int64) uint64 { return uint64(uint32(slice)) << countBits }

// cell is one slice's two counters.
type cell struct{ c [2]atomic.Uint64 }

// window is a ring of [slices] time slices of two counters each, safe for
// concurrent use. Counting an event in the newest slice and reading the
// totals take no lock: a clock reading, one load of the newest slice's
// number, and one atomic add (reading the totals is 20 loads). Only moving
// to a new slice, once per slice width, takes the mutex.
//
// Slice numbers count slice widths from origin, the first instant the window
// saw. Time is taken as given:
//   - an instant in the newest slice, or in one of the [slices]-1 slices
//     before it (time going backwards a little, as concurrent callers' clock
//     readings may), is counted in the newest slice;
//   - an instant in one of the [slices]-1 slices after it advances the ring,
//     expiring the slices it passes over;
//   - an instant [slices] slices or more away in either direction (a
//     suspended process, a wall-clock step, a bogus time) starts the window
//     afresh.
//
// The zero instant means the clock now, read as time.Since(origin): one
// reading of the monotonic clock, not time.Now's two. Arithmetic saturates
// (time.Time.Sub does) and the ring never moves more than [slices] steps per
// call, so no instant can panic or stall it.
//
// A cell is counted only while the slice number it holds is one of the
// window's; counts are 32 bits a slice (4·10⁹ events a slice width), and a
// cell's slice is kept to its low 32 bits, which is exact unless a slot goes
// unwritten for 2³²·10 slice widths while the window moves a little at a
// time (136 years at the default slice widths).
type window struct {
	started atomic.Bool
	head    atomic.Int64 // slice number of the newest slice
	mu      sync.Mutex   // serialises starting and moving the window
	origin  time.Time    // set once, under mu, before started
	cells   [slices]cell
}

// slice returns the number of the slice events at now are counted in,
// moving the window to now if it must. width must be positive.
func (w *window) slice(now time.Time, width time.Duration) int64 {
	if !w.started.Load() {
		return w.move(now, width)
	}
	var d time.Duration
	if now.IsZero() {
		d = time.Since(w.origin)
	} else {
		d = now.Sub(w.origin)
	}
	h := w.head.Load()
	// The newest slice: a multiplication, not a division. d-lo is negative
	// when it overflows (d and lo at opposite ends of the range).
	if lo := time.Duration(h) * width; d >= lo && d-lo >= 0 && d-lo < width {
		return h
	}
	if k := sliceOf(d, width); k <= h && uint64(h-k) < slices {
		return h // a small step back: count it as the newest
	}
	return w.move(now, width)
}

// move starts the window, or moves it to now, under the lock.
func (w *window) move(now time.Time, width time.Duration) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.IsZero() {
		now = time.Now()
	}
	if !w.started.Load() {
		w.origin = now
		w.head.Store(0)
		w.started.Store(true)
		return 0
	}
	k := sliceOf(now.Sub(w.origin), width)
	h := w.head.Load()
	switch {
	case k <= h && uint64(h-k) < slices:
		return h // another caller moved it first
	case k > h && uint64(k-h) < slices:
		// The cells of the slices passed over hold older slice numbers,
		// so they count for nothing from now on.
		w.head.Store(k)
	default:
		for i := range w.cells {
			w.cells[i].c[counterA].Store(0)
			w.cells[i].c[counterB].Store(0)
		}
		w.head.Store(k)
	}
	return k
}

// add counts n events on counter which in slice k, and reports false if
// the cell has moved on to a later slice since k was read (the caller asks
// for the slice again).
func (w *window) add(k int64, which int, n uint64) bool {
	c := &w.cells[ring(k)].c[which]
	tag := tagOf(k)
	for {
		v := c.Load()
		switch {
		case v&^countMask == tag:
			if nv := c.Add(n); nv&^countMask == tag {
				return true
			}
			// The cell was reused for a later slice between the load and
			// the add: take the events back out of it.
			c.Add(-n)
			return false
		case int32(uint32(v>>countBits)-uint32(k)) > 0 && v&countMask != 0:
			return false // the cell holds a later slice
		case c.CompareAndSwap(v, tag|n):
			return true // an expired slice's cell, reused
		}
	}
}

// count counts n events on counter which at now and returns the slice they
// were counted in.
func (w *window) count(now time.Time, width time.Duration, which int, n uint64) int64 {
	for {
		if k := w.slice(now, width); w.add(k, which, n) {
			return k
		}
	}
}

// undo takes back n events counted on counter which in slice k, unless the
// slice has expired since (taking them with it).
func (w *window) undo(k int64, which int, n uint64) {
	c := &w.cells[ring(k)].c[which]
	tag := tagOf(k)
	for {
		v := c.Load()
		if v&^countMask != tag || v&countMask < n {
			return
		}
		if c.CompareAndSwap(v, v-n) {
			return
		}
	}
}

// sums returns the totals of both counters over the window's slices, as
// they stand; concurrent additions may or may not be seen.
func (w *window) sums() (a, b int64) {
	h := w.head.Load()
	s := h - (slices - 1)
	i := ring(s)       // stepped along, not recomputed: ring divides
	for range slices { // counted, not s <= h: h may be math.MaxInt64
		c := &w.cells[i]
		tag := tagOf(s)
		s++
		if v := c.c[counterA].Load(); v&^countMask == tag {
			a += int64(v & countMask)
		}
		if v := c.c[counterB].Load(); v&^countMask == tag {
			b += int64(v & countMask)
		}
		if i++; i == slices {
			i = 0
		}
	}
	return a, b
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
