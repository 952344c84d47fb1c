package breaker

import (
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/recoil-go/recoil/internal/window"
)

// The failure-rate window counts outcomes and failures in the time slices
// of a window.Ring, the sliding window the retry budgets count in too. A
// bucket is a slice: bucket e holds the instants [e·width, (e+1)·width)
// after epoch. An outcome is counted in the bucket of its own instant, not
// in the newest one: an instant a little late lands where it belongs, and
// one a whole window behind the outcomes recorded since (its bucket's slot
// already holds a later bucket) is dropped. A counter that reaches
// window.MaxCount outcomes in one bucket of one stripe stops counting that
// bucket, failures with it, so the rate it reports is the rate of the
// outcomes it counted.
//
// Every outcome writes a bucket, so one ring shared by all cores would be a
// contended cache line (measured: 7 → 23 ns at two cores). The window keeps
// one ring per stripe instead, each on its own cache lines, and an outcome
// goes to a stripe chosen at random; the rate is the sum over all stripes,
// read only when a failure is recorded.
const maxStripes = 16

// The two counters of a bucket.
const (
	countOutcomes = 0 // Success and Failure
	countFailures = 1
)

// stripeSize pads a stripe to whole pairs of 128-byte cache lines: a line
// and the neighbour that adjacent-line prefetchers pull in with it.
const stripeSize = (window.Size + 127) / 128 * 128

// stripe is one ring of buckets, alone on its cache lines.
type stripe struct {
	ring window.Ring
	_    [stripeSize - window.Size]byte
}

type rateWindow struct {
	width   int64   // nanoseconds per bucket
	rate    float64 // trip when failures >= rate*outcomes
	min     int     // ... and outcomes >= min
	mask    uint32  // len(stripes)-1
	stripes []stripe
}

func newWindow(span time.Duration, rate float64, min int) *rateWindow {
	n := 1
	for n < 2*runtime.GOMAXPROCS(0) && n < maxStripes {
		n *= 2
	}
	return &rateWindow{
		width:   max(int64(span)/window.Slots, 1),
		rate:    rate,
		min:     min,
		mask:    uint32(n - 1),
		stripes: make([]stripe, n),
	}
}

// bucket returns the number of the bucket holding instant t.
func (w *rateWindow) bucket(t int64) int64 { return window.SliceOf(t, w.width) }

// add counts one outcome at instant t. For a failure it reports whether the
// window now calls for a trip; a success can only lower the rate, so it is
// not checked (if it completes MinRequests, the next failure trips).
func (w *rateWindow) add(t int64, failed bool) bool {
	e := w.bucket(t)
	s := &w.stripes[0]
	if w.mask != 0 {
		s = &w.stripes[rand.Uint32()&w.mask]
	}
	if s.ring.Add(e, countOutcomes, 1) != window.Added || !failed {
		return false
	}
	s.ring.Add(e, countFailures, 1) // cannot be full: failures <= outcomes
	n, f := w.sum(e)
	return n >= w.min && float64(f) >= w.rate*float64(n)
}

// sum returns the outcomes and failures in buckets e-9 through e.
func (w *rateWindow) sum(e int64) (outcomes, failures int) {
	for i := range w.stripes {
		n, f := w.stripes[i].ring.Sum(e)
		outcomes += int(n)
		failures += int(f)
	}
	return outcomes, failures
}

// reset empties the window.
func (w *rateWindow) reset() {
	for i := range w.stripes {
		w.stripes[i].ring.Reset()
	}
}
