package breaker

import (
	"math/bits"
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
	width    int64   // nanoseconds per bucket
	rate     float64 // trip when failures >= rate*outcomes (0: never)
	slowRate float64 // trip when slow calls >= slowRate*outcomes (0: never)
	min      int     // ... and outcomes >= min
	mask     uint32  // len(stripes)-1
	stripes  []stripe
	// slow counts slow calls, in a ring of its own beside each stripe's
	// (nil without a slow-call rate): a word per bucket,
	//
	//	epoch (24 bits) | slow calls (40 bits)
	//
	// written only for a slow call, so a window without slow calls costs
	// what it did before there were any, and a breaker without a
	// SlowCallRate allocates none of it.
	slow []stripe
}

const (
	slowBits = 64 - epochBits
	slowMax  = 1<<slowBits - 1
)

// newWindow returns a window tripping at failure rate rate and slow-call
// rate slowRate (either zero: that trip is off) over at least min outcomes.
func newWindow(span time.Duration, rate, slowRate float64, min int) *rateWindow {
	n := 1
	for n < 2*runtime.GOMAXPROCS(0) && n < maxStripes {
		n *= 2
	}
	w := &rateWindow{
		width:    max(int64(span)/numBuckets, 1),
		rate:     rate,
		slowRate: slowRate,
		min:      min,
		mask:     uint32(n - 1),
		stripes:  make([]stripe, n),
	}
	if slowRate > 0 {
		w.slow = make([]stripe, n)
	}
	return w
}

// bucket returns the number of the period holding instant t.
func (w *rateWindow) bucket(t int64) int64 { return window.SliceOf(t, w.width) }

func unpack(v uint64) (epoch, failures, outcomes uint64) {
	return v >> epochShift, v >> countBits & countMax, v & countMax
}

// add counts one outcome at instant t, a slow call if slow (only with a
// slow-call rate). For a failure or a slow call it reports whether the
// window now calls for a trip; a fast success can only lower both rates,
// so it is not checked (if it completes MinRequests, the next failure or
// slow call trips).
func (w *rateWindow) add(t int64, failed, slow bool) bool {
	e := w.bucket(t)
	ep := uint64(e) & epochMask
	i := uint32(0)
	if w.mask != 0 {
		i = rand.Uint32() & w.mask
	}
	k := (e%numBuckets + numBuckets) % numBuckets
	b := &w.stripes[i].buckets[k]
	halved := false
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
		halved = n > countMax
		if halved { // halve, keeping the rate
			n, f = n/2, (f+1)/2
		}
		if b.CompareAndSwap(old, ep<<epochShift|f<<countBits|n) {
			break
		}
	}
	if w.slow != nil && (slow || halved) {
		w.addSlow(&w.slow[i].buckets[k], ep, slow, halved)
	}
	if !(failed && w.rate > 0) && !slow {
		return false
	}
	return w.trips(e)
}

// addSlow counts a slow call in bucket b of period ep, and halves its count
// when the outcomes beside it were halved, so the slow-call rate stays
// what it was.
func (w *rateWindow) addSlow(b *atomic.Uint64, ep uint64, slow, halve bool) {
	for {
		old := b.Load()
		oe, s := old>>slowBits, old&slowMax
		if oe != ep && s != 0 {
			if (ep-oe)&epochMask >= epochHalf {
				return // a later period holds the bucket
			}
			s = 0
		}
		if halve {
			s = (s + 1) / 2
		}
		if slow && s < slowMax {
			s++
		}
		if b.CompareAndSwap(old, ep<<slowBits|s) {
			return
		}
	}
}

// addSlowSignal counts a slow call that is not an outcome of its own (its
// outcome was counted when it was recorded: a stream found slow as it is
// read) at instant t, and reports whether the window now calls for a trip.
func (w *rateWindow) addSlowSignal(t int64) bool {
	e := w.bucket(t)
	i := uint32(0)
	if w.mask != 0 {
		i = rand.Uint32() & w.mask
	}
	k := (e%numBuckets + numBuckets) % numBuckets
	w.addSlow(&w.slow[i].buckets[k], uint64(e)&epochMask, true, false)
	return w.trips(e)
}

// trips reports whether the window ending in period e calls for a trip:
// at least min outcomes, and the failures or the slow calls among them at
// their rate.
func (w *rateWindow) trips(e int64) bool {
	n, f, s := w.sum(e)
	if n < w.min || n == 0 {
		return false
	}
	return w.rate > 0 && float64(f) >= w.rate*float64(n) ||
		w.slowRate > 0 && float64(min(s, n)) >= w.slowRate*float64(n)
}

// sum returns the outcomes, failures and slow calls in the buckets of
// periods e-9 through e.
func (w *rateWindow) sum(e int64) (outcomes, failures, slow int) {
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
	for i := range w.slow {
		for j := range w.slow[i].buckets {
			v := w.slow[i].buckets[j].Load()
			if (ep-v>>slowBits)&epochMask < numBuckets {
				slow += int(v & slowMax)
			}
		}
	}
	return outcomes, failures, slow
}

// span returns the window's span in nanoseconds: its ten buckets.
func (w *rateWindow) span() int64 { return w.width * numBuckets }

// runToTrip returns the run of failures that trips a scaled-run breaker
// whose window ends in period e: DefaultRunMargin more than the bit length
// of the outcomes the window holds (see DefaultRunMargin).
func (w *rateWindow) runToTrip(e int64) uint32 {
	n, _, _ := w.sum(e)
	return uint32(bits.Len(uint(n))) + DefaultRunMargin
}

// reset empties the window.
func (w *rateWindow) reset() {
	for _, ring := range [2][]stripe{w.stripes, w.slow} {
		for i := range ring {
			for j := range ring[i].buckets {
				ring[i].buckets[j].Store(0)
			}
		}
	}
}
