package sim

import (
	"math/bits"
	"unsafe"
)

// event is one timed event: 16 bytes. at is virtual nanoseconds since the
// run began; id is the entity the event is for (a call, a job, a client);
// aux holds the kind in its top byte and, for events that may go stale, a
// generation in the rest.
type event struct {
	at  int64
	id  uint32
	aux uint32
}

func (e event) kind() uint8 { return uint8(e.aux >> 24) }
func (e event) gen() uint32 { return e.aux & genMask }

const genMask = 1<<24 - 1

// queue is the pending-event set: a radix heap (Ahuja, Mehlhorn, Orlin and
// Tarjan, "Faster algorithms for the shortest path problem", 1990) of event
// values, keyed by at.
//
// A radix heap needs the keys to be monotone — nothing is scheduled before
// the event being handled — which a discrete-event simulation guarantees. In
// exchange a push is an append to one of 64 buckets, chosen by the highest
// bit in which the event's time differs from the last time taken; bucket 0
// holds the events at exactly that time. A pop takes from bucket 0; when it
// is empty, the lowest non-empty bucket is scanned for its minimum and its
// events are redistributed into lower buckets. Every event moves to a lower
// bucket each time it moves, so it moves a few times at most, and every
// access is a sequential walk of a slice: no pointer chasing and no
// log-depth sift through a large array, which is what costs a binary heap
// its cache misses at 100,000 events.
//
// Measured on the hold model (pop one, push one a uniform 0–1 ms later;
// BenchmarkHeapBaseline and BenchmarkQueueHold), medians of 3 on a shared
// 2-vCPU guest with a load average of 4 to 6: at 10,000 events, binary
// heap 125 ns, this queue 107 ns; at 100,000, 207 and 130 ns. Without
// refill's prefetch (refillAhead) this queue took 95 and 113–123 ns in
// runs alternating with those: in the hold loop the queue is all there is
// and its buckets stay in the cache, so the prefetch only costs; in the
// simulator it pays. An earlier, quieter run had the binary heap at 112
// and 164 ns, a 4-ary heap with a fused pop-push at 95 and 199 ns, and
// this queue at 51 and 73 ns.
//
// Ties pop last in, first out: events of one time always sit in one bucket
// in the order they were pushed (a refill moves a whole bucket, in order),
// and bucket 0 pops from its end. So a run is deterministic, no sequence
// number is kept, and any queue that pops equal times latest first would
// give the same runs (TestQueueTiesLastInFirstOut). Memory is the events
// pending plus the buckets' slack.
//
// Wider digits move each event fewer times but did not pay: with 8-bit
// digits (a level of 256 buckets per byte of the time; 2.8 moves per event
// in the gateway-outage scenario at 10,000 callers, against 7.8 here) a run
// took 1.04–1.16 times as long, with 2-bit digits 1.02–1.07 times
// (interleaved pairs on thread CPU time, 1,000 to 100,000 callers): the
// moves cost little next to waiting for the lines of a bucket filled long
// before (see refillAhead).
type queue struct {
	last int64
	mask uint64 // bit i set: bucket i is not empty
	n    int
	b    [64][]event
	// lo[i] is the index in b[i] of its earliest event, so peek need not
	// scan or move anything.
	lo [64]int32
}

func (q *queue) len() int { return q.n }

// push adds e; e.at must not be before the last time taken.
func (q *queue) push(e event) {
	i := bits.Len64(uint64(e.at ^ q.last))
	b := append(q.b[i], e)
	q.b[i] = b
	if q.mask&(1<<i) == 0 {
		q.mask |= 1 << i
		q.lo[i] = int32(len(b) - 1)
	} else if e.at < b[q.lo[i]].at {
		q.lo[i] = int32(len(b) - 1)
	}
	q.n++
}

// peek returns the earliest event without changing the queue (min may
// redistribute events; peek never does); the queue must not be empty.
func (q *queue) peek() event {
	i := bits.TrailingZeros64(q.mask)
	if i == 0 {
		return q.b[0][len(q.b[0])-1]
	}
	return q.b[i][q.lo[i]]
}

// min returns the earliest event; the queue must not be empty.
func (q *queue) min() event {
	if q.mask&1 == 0 {
		_ = q.refill()
	}
	b := q.b[0]
	return b[len(b)-1]
}

// refill moves the events of the lowest non-empty bucket down, so that
// bucket 0 holds the earliest, and returns them, in a slice that is valid
// until the next push: they are the next to come out, but for events
// pushed in the meantime, so a caller may start loading what they need.
//
// It is push inlined by hand, with the mask and the last time in registers
// and the count left alone: the events go to the same buckets in the same
// order as pushing them one by one would, so ties pop as they did.
func (q *queue) refill() []event {
	i := bits.TrailingZeros64(q.mask)
	bi := q.b[i]
	q.b[i] = bi[:0]
	mask := q.mask &^ (1 << i)
	last := bi[q.lo[i]].at
	q.last = last
	for j, e := range bi {
		if len(bi) >= refillCold && j%4 == 0 && j+refillAhead < len(bi) { // a line of 4 events
			prefetch(unsafe.Pointer(&bi[j+refillAhead]), 4*unsafe.Sizeof(e))
		}
		k := bits.Len64(uint64(e.at^last)) & 63 // below i: never bi itself
		b := append(q.b[k], e)
		q.b[k] = b
		if mask&(1<<k) == 0 {
			mask |= 1 << k
			q.lo[k] = int32(len(b) - 1)
		} else if e.at < b[q.lo[k]].at {
			q.lo[k] = int32(len(b) - 1)
		}
	}
	q.mask = mask
	return bi
}

// refillAhead is how many events ahead refill asks for the bucket it
// empties, a cache line (4 events) at a time. The bucket was filled by
// pushes 10–30 ms of virtual time earlier, and in between the run loop went
// through thousands of calls, so its lines are no longer in the cache and
// the CPU's own prefetcher does not start early enough. Measured
// (interleaved pairs on thread CPU time, medians of 9 to 13): 0.91–0.95x
// the time per event at 10,000 callers, 0.97–1.0x at 100,000; 96 ahead did
// no better than 32.
const refillAhead = 32

// refillCold is the size from which a bucket is prefetched: a smaller one
// was mostly filled by a recent refill of a larger one, and is still in
// the cache. Measured as above against prefetching every bucket: 0.96x the
// time per event at 10,000 callers, 0.98x at 100,000 (11 pairs, single
// pairs 0.88–1.07).
const refillCold = 256

// pop removes the event min returned.
func (q *queue) pop() {
	b := q.b[0][:len(q.b[0])-1]
	q.b[0] = b
	if len(b) == 0 {
		q.mask &^= 1
	}
	q.n--
}
