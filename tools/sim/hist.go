package sim

import (
	"math/bits"
	"time"
)

// hist is a log-linear histogram of non-negative durations in nanoseconds:
// exact below 128 ns, then 64 buckets per power of two, so a percentile is
// within 0.8 % of the true value. Its size is fixed (about 30 KB), whatever
// the number of values: memory stays proportional to entities, not events.
// The mean and the maximum are kept exactly.
type hist struct {
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

func (h *hist) add(v int64) {
	h.n++
	h.sum += float64(v)
	if v > h.max {
		h.max = v
	}
	h.counts[histIndex(v)]++
}

// quantile returns the q-quantile by nearest rank (q in (0, 1]).
func (h *hist) quantile(q float64) time.Duration {
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

func (h *hist) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Percentiles summarises a distribution of durations.
type Percentiles struct {
	Count int64         `json:"count"`
	Mean  time.Duration `json:"-"`
	P50   time.Duration `json:"-"`
	P90   time.Duration `json:"-"`
	P99   time.Duration `json:"-"`
	Max   time.Duration `json:"-"`
}

func (h *hist) percentiles() Percentiles {
	return Percentiles{Count: h.n, Mean: h.mean(), P50: h.quantile(0.5), P90: h.quantile(0.9), P99: h.quantile(0.99), Max: time.Duration(h.max)}
}
