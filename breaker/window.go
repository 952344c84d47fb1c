package breaker

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/internal/window"
)

// The failure-rate window is the sliding window of package internal/window
// (window.Slots buckets of Window/10, numbered by window.SliceOf from a fixed
// epoch) in a layout of its own: a ring of buckets, each one atomic word:
//
//	epoch (24 bits) | failures (20 bits) | outcomes (20 bits)
//
// where epoch is the bucket's period number modulo 2^24. Packing the epoch
// with the counts lets a recorder move a bucket to a new period and count
// into it in one CAS, with no lock; a stale bucket is recognised by its
// epoch rather than cleared by a timer.
//
// Every outcome writes a bucket, so one ring shared by all cores would be a
// contended cache line (measured: 7 → 23 ns at two cores). The window keeps
// one ring per stripe instead, each on its own pair of cache lines, and an
// outcome goes to a stripe chosen at random; the rate is the sum over all
// stripes, read only when a failure is recorded.
//
// Why not window.Ring, which the retry budgets count in: a Ring keeps each
// counter in a word of its own (a 32-bit tag and a 32-bit count, so that a
// budget's absolute counts, which its balance is computed from, never need
// halving), so a failure would be two atomic adds instead of one CAS, or,
// with successes and failures counted apart, one add but a sum over twice
// the words at every failure: measured, +53 % on the window alone with one
// failure in eight (BenchmarkWindowAdd). A breaker needs only the rate,
// which halving keeps, so two 20-bit counts fit one word with the tag.
const (
	numBuckets = window.Slots
	countBits  = 20
	countMax   = 1<<countBits - 1
	epochBits  = 24
	epochMask  = 1<<epochBits - 1
	epochShift = 2 * countBits
	epochHalf  = 1 << (epochBits - 1)
	maxStripes = 16
)

// stripe is one ring of buckets, padded to 128 bytes: a cache line and the
// neighbour that adjacent-line prefetchers pull in with it.
type stripe struct {
	buckets [numBuckets]atomic.Uint64
	_       [128 - numBuckets*8]byte
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
		width:   max(int64(span)/numBuckets, 1),
		rate:    rate,
		min:     min,
		mask:    uint32(n - 1),
		stripes: make([]stripe, n),
	}
}

// bucket returns the number of the period holding instant t.
func (w *rateWindow) bucket(t int64) int64 { return window.SliceOf(t, w.width) }

func unpack(v uint64) (epoch, failures, outcomes uint64) {
	return v >> epochShift, v >> countBits & countMax, v & countMax
}

// add counts one outcome at instant t. For a failure it reports whether the
// window now calls for a trip; a success can only lower the rate, so it is
// not checked (if it completes MinRequests, the next failure trips).
func (w *rateWindow) add(t int64, failed bool) bool {
	e := w.bucket(t)
	ep := uint64(e) & epochMask
	s := &w.stripes[0]
	if w.mask != 0 {
		s = &w.stripes[rand.Uint32()&w.mask]
	}
	b := &s.buckets[(e%numBuckets+numBuckets)%numBuckets]
	for {
		old := b.Load()
		oe, f, n := unpack(old)
		if oe != ep && n != 0 {
			if (ep-oe)&epochMask >= epochHalf {
				// The bucket already holds a later period: t is a whole
				// window behind outcomes recorded since. Drop it.
				return false
			}
			f, n = 0, 0 // the bucket's period has left the window
		}
		n++
		if failed {
			f++
		}
		if n > countMax { // halve, keeping the rate
			n, f = n/2, (f+1)/2
		}
		if b.CompareAndSwap(old, ep<<epochShift|f<<countBits|n) {
			break
		}
	}
	if !failed {
		return false
	}
	n, f := w.sum(e)
	return n >= w.min && float64(f) >= w.rate*float64(n)
}

// sum returns the outcomes and failures in the buckets of periods e-9
// through e.
func (w *rateWindow) sum(e int64) (outcomes, failures int) {
	ep := uint64(e) & epochMask
	for i := range w.stripes {
		for j := range w.stripes[i].buckets {
			be, f, n := unpack(w.stripes[i].buckets[j].Load())
			if (ep-be)&epochMask < numBuckets {
				outcomes += int(n)
				failures += int(f)
			}
		}
	}
	return outcomes, failures
}

// reset empties the window.
func (w *rateWindow) reset() {
	for i := range w.stripes {
		for j := range w.stripes[i].buckets {
			w.stripes[i].buckets[j].Store(0)
		}
	}
}
