package tally

import (
	"math"
	"sync"
	"time"
)

// Resolution is the width of one bucket: an event is placed at the
// millisecond it happened, counted from the first.
const Resolution = time.Millisecond

const (
	// lateSlack is how many buckets late an event may arrive (its instant
	// older than the newest seen) and still be placed exactly. An event
	// read its clock before it took the lock; it is late by the time it
	// waited for the lock, microseconds. One later still is placed at the
	// oldest bucket kept.
	lateSlack = 1024
)

// SeriesLen is how many fixed windows a Buckets keeps counts of: the
// newest 3,000.
const SeriesLen = 3000

// Buckets counts events in buckets of one Resolution each, indexed from 0
// (the epoch's bucket), and keeps the largest number that fell within k
// consecutive buckets, and a series of counts per fixed window of k
// buckets. It is Window without a clock or a lock, for a caller that
// places events under a lock of its own (the gateway, which decides each
// attempt's fate by the same count).
//
// Use NewBuckets; the zero Buckets is not usable. A Buckets is not safe
// for concurrent use. An event may be added out of order: up to about a
// second (1024 buckets) older than the newest it is placed exactly; older
// still, at the oldest bucket kept.
//
// The ring holds the newest len(ring) buckets; the sum of the newest k is
// kept as they pass, so the peak of the sliding window is updated in O(1)
// per event that is not late.
type Buckets struct {
	k     int64    // the span in buckets
	ring  []uint32 // the newest len(ring) buckets, bucket b at b&mask
	mask  int64
	cur   int64 // the newest bucket; -1 before any event
	sum   int64 // events in buckets cur-k+1..cur
	total int64

	peak    int64
	peakEnd int64 // the last bucket of the peak span

	series []seriesSlot
}

// seriesSlot counts the events of one fixed window: buckets n·k to n·k+k-1.
type seriesSlot struct {
	n     int64
	count int64
}

// NewBuckets returns Buckets whose sliding window spans k buckets; k less
// than 1 means 1.
func NewBuckets(k int64) *Buckets {
	w := new(Buckets)
	w.init(max(k, 1))
	return w
}

func (w *Buckets) init(k int64) {
	size := int64(1)
	for size < k+lateSlack {
		size <<= 1
	}
	*w = Buckets{k: k, ring: make([]uint32, size), mask: size - 1, cur: -1, series: make([]seriesSlot, SeriesLen)}
	for i := range w.series {
		w.series[i].n = -1
	}
}

// Add counts one event in bucket b; a negative b counts in bucket 0.
func (w *Buckets) Add(b int64) {
	if b < 0 {
		b = 0
	}
	w.total++
	switch {
	case b > w.cur:
		w.advance(b)
		fallthrough
	case b == w.cur:
		w.ring[b&w.mask]++
		w.sum++
		if w.sum > w.peak {
			w.peak, w.peakEnd = w.sum, b
		}
	default:
		w.late(b)
	}
	w.addSeries(b)
}

// advance moves the newest bucket to b > cur, emptying the buckets it
// passes and taking those that leave the span out of the sum.
func (w *Buckets) advance(b int64) {
	size := int64(len(w.ring))
	if w.cur < 0 || b-w.cur >= size {
		clear(w.ring)
		w.sum, w.cur = 0, b
		return
	}
	for i := w.cur + 1; i <= b; i++ {
		if out := i - w.k; out >= 0 {
			w.sum -= int64(w.ring[out&w.mask])
		}
		w.ring[i&w.mask] = 0
	}
	w.cur = b
}

// late counts an event in bucket b < cur, and recomputes the spans that
// end at b or later and so contain it.
func (w *Buckets) late(b int64) {
	size := int64(len(w.ring))
	if oldest := w.cur - size + w.k; b < oldest {
		b = max(oldest, 0)
	}
	w.ring[b&w.mask]++
	if b > w.cur-w.k {
		w.sum++
	}
	// The span ending at b, then each later span that still contains b.
	var s int64
	for i := max(b-w.k+1, 0); i <= b; i++ {
		s += int64(w.ring[i&w.mask])
	}
	for e := b; ; {
		if s > w.peak {
			w.peak, w.peakEnd = s, e
		}
		e++
		if e > w.cur || e > b+w.k-1 {
			break
		}
		s += int64(w.ring[e&w.mask])
		if out := e - w.k; out >= 0 {
			s -= int64(w.ring[out&w.mask])
		}
	}
}

func (w *Buckets) addSeries(b int64) {
	n := b / w.k
	s := &w.series[n%SeriesLen]
	switch {
	case s.n == n:
		s.count++
	case s.n < n:
		s.n, s.count = n, 1
	}
}

// CoolFrom returns the first bucket j ≥ Newest at which the span ending at
// j holds fewer than below events, if no more arrive. No span holds fewer
// than zero: for a below of zero or less it returns math.MaxInt64.
func (w *Buckets) CoolFrom(below int64) int64 {
	if below <= 0 {
		return math.MaxInt64
	}
	s, j := w.sum, w.cur
	for s >= below {
		if out := j - w.k + 1; out >= 0 {
			s -= int64(w.ring[out&w.mask])
		}
		j++
	}
	return j
}

// SeriesAt returns the count of fixed window n: buckets n·k to n·k+k-1. The
// newest SeriesLen windows are kept; an older one counts 0.
func (w *Buckets) SeriesAt(n int64) int64 {
	if n < 0 {
		return 0
	}
	if s := w.series[n%SeriesLen]; s.n == n {
		return s.count
	}
	return 0
}

// Newest returns the newest bucket an event was counted in; -1 before any.
func (w *Buckets) Newest() int64 { return w.cur }

// Recent returns the number of events in the span of k buckets ending at
// Newest.
func (w *Buckets) Recent() int64 { return w.sum }

// Total returns the number of events counted.
func (w *Buckets) Total() int64 { return w.total }

// Peak returns the largest number of events within any k consecutive
// buckets, and the first bucket of the first such span.
func (w *Buckets) Peak() (n, start int64) {
	return w.peak, max(w.peakEnd-w.k+1, 0)
}

// Window counts events over time and the largest number of them that fell
// within any span of length Span: a sliding window at millisecond
// resolution. Each event is placed at the millisecond it happened, counted
// from the first event; Peak is the largest number of events whose
// milliseconds lie within any Span-long run of milliseconds — every
// placement of the window, not only those aligned to a grid. Package load
// counts the attempts it sends with one; the gateway counts those it
// receives the same way, with Buckets under its own lock.
//
// The zero Window is usable and spans DefaultWindow. A Window is safe for
// concurrent use. An event may be added slightly out of order (its instant
// read before another's was added): up to about a second late it is placed
// exactly; later still, at the oldest millisecond kept.
type Window struct {
	mu    sync.Mutex
	span  time.Duration
	epoch time.Time
	w     Buckets
}

// NewWindow returns a Window spanning span, rounded down to whole
// milliseconds; zero or less means DefaultWindow, more than MaxWindow means
// MaxWindow, less than MinWindow means MinWindow.
func NewWindow(span time.Duration) *Window {
	return &Window{span: span}
}

// normSpan returns span as a Window uses it.
func normSpan(span time.Duration) time.Duration {
	switch {
	case span <= 0:
		span = DefaultWindow
	case span > MaxWindow:
		span = MaxWindow
	case span < MinWindow:
		span = MinWindow
	}
	return span.Truncate(Resolution)
}

func (w *Window) initLocked(now time.Time) {
	w.span = normSpan(w.span)
	w.epoch = now
	w.w.init(int64(w.span / Resolution))
}

// Add counts an event now. It is shorthand for AddAt(time.Now()).
func (w *Window) Add() { w.AddAt(time.Now()) }

// AddAt counts an event at now.
func (w *Window) AddAt(now time.Time) {
	w.mu.Lock()
	if w.w.ring == nil {
		w.initLocked(now)
	}
	w.w.Add(int64(now.Sub(w.epoch) / Resolution))
	w.mu.Unlock()
}

// Span returns the length of the window.
func (w *Window) Span() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return normSpan(w.span)
}

// Total returns the number of events counted.
func (w *Window) Total() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.total
}

// Peak returns the largest number of events within any span of length Span,
// and when the first such span began, counted from the first event.
func (w *Window) Peak() (n int64, start time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w.ring == nil {
		return 0, 0
	}
	n, b := w.w.Peak()
	return n, time.Duration(b) * Resolution
}

// First returns the instant of the first event; the zero time if none.
func (w *Window) First() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.epoch
}
