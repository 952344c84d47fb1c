// Package hist keeps a distribution of durations in fixed memory and reads
// its percentiles by nearest rank: the one percentile rule of the
// simulator's results and the load driver's.
package hist

import (
	"math/bits"
	"time"
)

// Hist is a log-linear histogram of non-negative durations in nanoseconds:
// exact below 128 ns, then 64 buckets per power of two, so a percentile is
// within 0.8 % of the true value. Its size is fixed (about 30 KB), whatever
// the number of values: memory stays proportional to entities, not events.
// The count, the mean and the maximum are kept exactly.
//
// The zero Hist is empty and ready to use. A Hist is not safe for
// concurrent use.
type Hist struct {
	n      int64
	sum    float64
	max    int64
	counts [histBuckets]int64
}

const histBuckets = 128 + 56*64

func histIndex(v int64) int {
	if v < 128 {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 7
	return 128 + (shift-1)*64 + int(v>>shift) - 64
}

// histValue returns the midpoint of bucket i.
func histValue(i int) int64 {
	if i < 128 {
		return int64(i)
	}
	shift := (i-128)/64 + 1
	mant := int64((i-128)%64 + 64)
	lo := mant << shift
	return lo + (int64(1)<<shift)/2
}

// Add counts d; a negative d counts as zero.
func (h *Hist) Add(d time.Duration) {
	v := max(int64(d), 0)
	h.n++
	h.sum += float64(v)
	if v > h.max {
		h.max = v
	}
	h.counts[histIndex(v)]++
}

// Quantile returns the q-quantile by nearest rank (q in (0, 1]): the
// smallest value with at least q of the values at or below it, to within a
// bucket, and never above the maximum. It returns 0 for an empty Hist.
func (h *Hist) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n) + 0.9999999)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(histValue(i), h.max))
		}
	}
	return time.Duration(h.max)
}

// Count returns the number of values counted.
func (h *Hist) Count() int64 { return h.n }

// Max returns the largest value counted; 0 for an empty Hist.
func (h *Hist) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the mean of the values counted; 0 for an empty Hist.
func (h *Hist) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Merge adds the values counted in o to h.
func (h *Hist) Merge(o *Hist) {
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
	for i, c := range o.counts {
		h.counts[i] += c
	}
}
