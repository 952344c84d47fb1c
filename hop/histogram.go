package hop

import "sync/atomic"

// HistogramAttempts is how many attempt numbers a [Histogram] counts one by
// one; later attempts share one overflow bucket.
const HistogramAttempts = 10

// Histogram counts the requests a server receives by attempt number
// ([Request.Attempt]), so it can see how much of its load is retries: the
// counting on the receiving side (docs/why.md, section 6).
//
// The zero value is an empty histogram ready to use. A Histogram is safe for
// concurrent use; Observe is one atomic add and does not allocate. It must
// not be copied after first use.
type Histogram struct {
	// buckets[i] counts attempt i+1; the last counts attempts above
	// HistogramAttempts.
	buckets [HistogramAttempts + 1]atomic.Uint64
}

// Observe counts one request made as the given attempt. An attempt of 0 or
// less (the request did not say) counts as a first attempt: as far as the
// server can tell, that is what it is.
func (h *Histogram) Observe(attempt int) {
	i := min(max(attempt, 1), HistogramAttempts+1) - 1
	h.buckets[i].Add(1)
}

// Snapshot returns the counts, HistogramAttempts+1 of them: index 0 counts
// first attempts, index i attempt i+1, and the last index every attempt
// above HistogramAttempts. Each count is read atomically, the set is not: a
// request observed meanwhile may appear in some counts and not others.
func (h *Histogram) Snapshot() []uint64 {
	s := make([]uint64, len(h.buckets))
	for i := range h.buckets {
		s[i] = h.buckets[i].Load()
	}
	return s
}

// Total returns the number of requests observed.
func (h *Histogram) Total() uint64 {
	return h.buckets[0].Load() + h.Retries()
}

// Retries returns the number of requests observed that were not first
// attempts.
func (h *Histogram) Retries() uint64 {
	var n uint64
	for i := 1; i < len(h.buckets); i++ {
		n += h.buckets[i].Load()
	}
	return n
}
