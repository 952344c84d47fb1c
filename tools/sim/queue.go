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
// (interleaved pairs on thread CPU time, 1,000 to 100,000 callers).
//
// What did pay is sorting a large bucket instead of moving it down: when
// the bucket a refill would empty holds runMin events or more, its
// events are sorted at once into a run (sortRun), which min takes from in
// order, comparing its end with the buckets' earliest, as long as it
// lasts. Events pushed meanwhile go to the buckets as before. In the
// gateway-outage scenario at 10,000 callers under the first policy, with
// one run at a time, 58 % of the events came out of a run and an event
// moved 3.4 times on average, against 7.8. The simulator's thread
// CPU time per event with the run, over without it (pairs in one process,
// medians): 0.86 at 1,000 callers, 0.80 at 10,000 (7 pairs: 155 ns
// against 195). At 100,000 callers it was 1.05, and BenchmarkSimVsHeap's
// ratio rose from 1.81 to 2.18 (medians of 3, binaries in turn): there
// the run loop waits for calls in memory, and the lookahead that loads
// the calls of a refill's events several events ahead never sees a run's
// (prefetching the call 4 to 12 events ahead in the run did not win it
// back), so from lookaheadCalls call slots the run is off (world.newCall).
//
// Up to maxRuns runs may be taken at once. With one, a large bucket
// refilled while the run was still being taken was moved down as before:
// at 10,000 callers under the first policy that was 703,000 of the 1.56
// million moves in a world of 466,000 events. With four, the simulator's
// thread CPU time per event was 0.92 of one run's (two sets of 16 to 20
// pairs in one process, 10,000 callers: 0.918 and 0.924); two runs gave
// 0.97, and eight or sixteen no more than four (0.99 against four).
type queue struct {
	last int64
	mask uint64 // bit i set: bucket i is not empty
	n    int    // the events in the buckets and the runs
	b    [64][]event
	// lo[i] is the index in b[i] of its earliest event, so peek need not
	// scan or move anything.
	lo [64]int32

	// runs[:nr] hold the events of large buckets, each sorted latest
	// first (see sortRun) and taken from its end; runs[nr-1] was sorted
	// last. Of equal times, an event in a bucket was pushed after every
	// event of the runs, and one in a run after every one in the runs
	// before it (see first). spare is the sort's other buffer; free holds
	// the buffers of runs taken to their end.
	runs [maxRuns][]event
	nr   int
	// ends[k] is the time of the end of runs[k], and best the index of
	// the run whose end comes out first (see first): kept as the runs
	// change, so that first compares the buckets' earliest with one run's
	// end instead of going through them all, twice an event (min and the
	// run loop's peek).
	ends  [maxRuns]int64
	best  int
	spare []event
	free  [][]event
	// from is where the event min returned is: the run of that index, or
	// the buckets (-1).
	from int
	// noRun: refill moves every bucket down, however large (see
	// world.newCall).
	noRun bool
	// moved is what the last refill brought down, if min made one since
	// the run loop last looked (see refill).
	moved []event
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
	if q.nr == 0 {
		return q.peekBuckets()
	}
	e, _ := q.first()
	return e
}

// first returns the earliest of the buckets' earliest and the runs' ends,
// and where it is (a run's index, or -1): of equal times, the buckets'
// first, then the run sorted last (see rebest). An event of equal time in
// a later run or a bucket was pushed later, since events of one time sit
// in one bucket until it is sorted into a run. A run must be taken.
func (q *queue) first() (event, int) {
	r := q.runs[q.best]
	x := r[len(r)-1]
	if q.mask != 0 {
		if e := q.peekBuckets(); e.at <= x.at {
			return e, -1
		}
	}
	return x, q.best
}

// rebest finds the run whose end comes out first: the earliest, and of
// equal ends the one sorted last. A run must be taken.
func (q *queue) rebest() {
	best := q.nr - 1
	at := q.ends[best]
	for k := best - 1; k >= 0; k-- {
		if q.ends[k] < at {
			best, at = k, q.ends[k]
		}
	}
	q.best = best
}

// peekBuckets is peek of the buckets alone; one must not be empty.
func (q *queue) peekBuckets() event {
	i := bits.TrailingZeros64(q.mask)
	if i == 0 {
		return q.b[0][len(q.b[0])-1]
	}
	return q.b[i][q.lo[i]]
}

// min returns the earliest event; the queue must not be empty. An event
// of a run comes out before those in the buckets only if it is earlier
// (see first).
func (q *queue) min() event {
	if q.nr == 0 {
		q.from = -1
		if q.mask&1 == 0 {
			q.moved = q.refill()
			if q.nr > 0 { // the refill made a run
				q.from = 0
				return q.runs[0][len(q.runs[0])-1]
			}
		}
		b := q.b[0]
		return b[len(b)-1]
	}
	for {
		e, from := q.first()
		if from >= 0 || q.mask&1 != 0 {
			q.from = from
			return e
		}
		q.moved = q.refill() // bucket 0 or a new run gets the buckets' earliest
	}
}

// refill moves the events of the lowest non-empty bucket down, so that
// bucket 0 holds the earliest, and returns them, in a slice that is valid
// until the next push: they are the next to come out, but for events
// pushed in the meantime, so a caller may start loading what they need.
//
// It is push inlined by hand, with the mask and the last time in registers
// and the count left alone: the events go to the same buckets in the same
// order as pushing them one by one would, so ties pop as they did. A large
// bucket becomes a run instead (see sortRun), when fewer than maxRuns are
// being taken, and refill returns nil.
func (q *queue) refill() []event {
	i := bits.TrailingZeros64(q.mask)
	bi := q.b[i]
	mask := q.mask &^ (1 << i)
	last := bi[q.lo[i]].at
	q.last = last
	if len(bi) >= runMin && q.nr < maxRuns && !q.noRun {
		q.mask = mask
		q.sortRun(i, bi)
		return nil
	}
	q.b[i] = bi[:0]
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
	q.n--
	if k := q.from; k >= 0 {
		r := q.runs[k][:len(q.runs[k])-1]
		q.runs[k] = r
		if len(r) > 0 {
			q.ends[k] = r[len(r)-1].at
		} else { // taken to its end: the later runs move down
			q.free = append(q.free, r)
			copy(q.runs[k:q.nr], q.runs[k+1:q.nr])
			copy(q.ends[k:q.nr], q.ends[k+1:q.nr])
			q.nr--
			q.runs[q.nr] = nil
			if q.nr == 0 {
				return
			}
		}
		q.rebest()
		return
	}
	b := q.b[0][:len(q.b[0])-1]
	q.b[0] = b
	if len(b) == 0 {
		q.mask &^= 1
	}
}

// maxRuns is how many runs may be taken at once: a large bucket refilled
// while that many are is moved down instead.
const maxRuns = 4

// runMin is the size from which refill sorts a bucket into the run instead
// of moving its events down a bucket: below it, a bucket's events move
// down a few times at most, and the sort's counts (256 per digit) would
// cost more than they save. 64 measured no different (0.89 against 0.85,
// in the same pairs as the queue's comment gives).
const runMin = 256

// sortRun makes the events of bucket i, bi, a new run: sorted latest first,
// events of equal times in the order they were pushed, so that the run's
// end, where they are taken, holds the earliest, and of those the one
// pushed last (as a bucket pops them). It is a least-significant-digit
// radix sort, which is stable, on the bits below i-1 (the events of bucket
// i agree on the others), complemented to sort descending; a digit on
// which all agree is skipped. Fewer than maxRuns runs must be taken. The
// sort reads bi and writes only two buffers, the spare and one a run
// taken to its end left (free), which grow to the largest run and stay:
// bucket i keeps its own.
func (q *queue) sortRun(i int, bi []event) {
	n := len(bi)
	passes := (i - 1 + 7) / 8
	var count [8][256]int32
	countDigits(&count, bi, passes)
	var buf []event
	if k := len(q.free); k > 0 {
		buf, q.free = q.free[k-1], q.free[:k-1]
	}
	bufs := [2][]event{fit(buf, n), fit(q.spare, n)}
	src, w, moved := bi, 0, false
	for p := range passes {
		c := &count[p]
		shift := 8 * p
		if c[^uint64(src[0].at)>>shift&255] == int32(n) {
			continue // every event has the same digit
		}
		var sum int32
		for d, k := range c {
			c[d] = sum
			sum += k
		}
		dst := bufs[w]
		for _, e := range src {
			d := ^uint64(e.at) >> shift & 255
			dst[c[d]] = e
			c[d]++
		}
		src, w, moved = dst, w^1, true
	}
	if !moved { // already in order: every digit the same, or bucket 1
		copy(bufs[0], bi)
		src, w = bufs[0], 1
	}
	q.b[i] = bi[:0]
	q.runs[q.nr], q.spare = src, bufs[w][:0]
	q.ends[q.nr] = src[n-1].at
	// The new run wins ties with the others (see first).
	if q.nr == 0 || q.ends[q.nr] <= q.ends[q.best] {
		q.best = q.nr
	}
	q.nr++
}

// countDigits counts the digits of the complemented times of bi, passes
// of them from the lowest, into count. The four lowest are counted in one
// unrolled loop whatever passes is (a bucket of up to 2^32 ns, 4 s, has no
// more; one with fewer leaves counts nobody reads). With a loop over the
// digits inside the loop over the events, counting took 4.4 times the
// instructions (56 million against 13 in the three gateway-outage worlds
// at 10,000 callers, callgrind).
func countDigits(count *[8][256]int32, bi []event, passes int) {
	for _, e := range bi {
		k := ^uint64(e.at)
		count[0][k&255]++
		count[1][k>>8&255]++
		count[2][k>>16&255]++
		count[3][k>>24&255]++
	}
	for p := 4; p < passes; p++ {
		c := &count[p]
		for _, e := range bi {
			c[^uint64(e.at)>>(8*p)&255]++
		}
	}
}

// fit returns b with length n, reallocated if it is too small.
func fit(b []event, n int) []event {
	if cap(b) < n {
		return make([]event, n, n+n/4)
	}
	return b[:n]
}
