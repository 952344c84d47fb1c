package budget

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/internal/window"
)

// slices is how many time slices a sliding window is cut into: Finagle's
// 10 (see window.Slots). A window of length L therefore remembers between
// 9/10·L and L of history, depending on how far into its newest slice the
// current instant is.
const slices = window.Slots

// Which of a window's two counters an event goes to: for Ratio, requests and
// retries; for Adaptive, requests and accepts.
const (
	counterA = 0
	counterB = 1
)

// slidingWindow is a window.Ring of [slices] time slices of two counters
// each, moved along by the instants it is given, safe for concurrent use.
// Counting an event in the newest slice and reading the totals take no
// lock: a clock reading, one load of the newest slice's number, and one
// atomic add (reading the totals is 20 loads). Only moving to a new slice,
// once per slice width, takes the mutex.
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
// A counter is counted only while the slice number it holds is one of the
// window's (see window.Ring). A counter holds at most window.MaxCount
// (2³¹−1) events a slice width; past that, requests, accepts and deposits
// are not counted, and a retry is refused.
type slidingWindow struct {
	started atomic.Bool
	head    atomic.Int64 // slice number of the newest slice
	mu      sync.Mutex   // serialises starting and moving the window
	origin  time.Time    // set once, under mu, before started
	ring    window.Ring
}

// slice returns the number of the slice events at now are counted in,
// moving the window to now if it must. width must be positive.
func (w *slidingWindow) slice(now time.Time, width time.Duration) int64 {
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
func (w *slidingWindow) move(now time.Time, width time.Duration) int64 {
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
		w.ring.Reset()
		w.head.Store(k)
	}
	return k
}

// count counts n events on counter which at now and returns the slice they
// were counted in, or false if the counter is full for that slice.
func (w *slidingWindow) count(now time.Time, width time.Duration, which int, n uint64) (int64, bool) {
	for {
		k := w.slice(now, width)
		switch w.ring.Add(k, which, n) {
		case window.Added:
			return k, true
		case window.Full:
			return k, false
		}
		// window.Later: the window moved on since k was read; ask again.
	}
}

// undo takes back n events counted on counter which in slice k, unless the
// slice has expired since (taking them with it).
func (w *slidingWindow) undo(k int64, which int, n uint64) { w.ring.Undo(k, which, n) }

// sums returns the totals of both counters over the window's slices, as
// they stand; concurrent additions may or may not be seen.
func (w *slidingWindow) sums() (a, b int64) { return w.ring.Sum(w.head.Load()) }

// sliceOf is d/width rounded towards minus infinity.
func sliceOf(d, width time.Duration) int64 { return window.SliceOf(int64(d), int64(width)) }

// sliceWidth is window/slices, at least one nanosecond: a window shorter
// than [slices] nanoseconds acts as one of [slices] nanoseconds.
func sliceWidth(window time.Duration) time.Duration {
	return max(window/slices, 1)
}
