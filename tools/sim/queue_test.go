package sim

import (
	"container/heap"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestQueueOrder checks the radix heap against a reference binary heap:
// events come out in time order, whatever the mix of pushes and pops, as
// long as nothing is pushed before the last time taken.
func TestQueueOrder(t *testing.T) {
	tests := []struct {
		name   string
		spread int64 // how far ahead of now a push lands
		ops    int
	}{
		{"ties", 3, 20_000},
		{"near", 1_000, 20_000},
		{"far", 1 << 40, 20_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, 2))
			var q queue
			ref := &times{}
			now := int64(0)
			for i := range tt.ops {
				if rnd.IntN(3) > 0 || ref.Len() == 0 {
					at := now + rnd.Int64N(tt.spread)
					q.push(event{at: at, id: uint32(i)})
					heap.Push(ref, at)
					continue
				}
				want := heap.Pop(ref).(int64)
				if p := q.peek(); p.at != want {
					t.Fatalf("op %d: peek = %d, want %d", i, p.at, want)
				}
				e := q.min()
				q.pop()
				if e.at != want {
					t.Fatalf("op %d: min = %d, want %d", i, e.at, want)
				}
				now = e.at
				if q.len() != ref.Len() {
					t.Fatalf("op %d: len = %d, want %d", i, q.len(), ref.Len())
				}
			}
		})
	}
}

// TestQueueTieOrder pins the order in which events of the same time come
// out, which a run's output depends on: the order of the radix heap that
// refills by pushing each event again, one by one (tieRef below). The
// queue's refill must move events exactly as that one does.
func TestQueueTieOrder(t *testing.T) {
	for _, spread := range []int64{2, 5, 64, 1 << 20} {
		rnd := rand.New(rand.NewPCG(3, uint64(spread)))
		var q queue
		var ref tieRef
		now := int64(0)
		for i := range 50_000 {
			if rnd.IntN(3) > 0 || ref.n == 0 {
				e := event{at: now + rnd.Int64N(spread), id: uint32(i)}
				q.push(e)
				ref.push(e)
				continue
			}
			got, want := q.min(), ref.min()
			q.pop()
			ref.pop()
			if got != want {
				t.Fatalf("spread %d, op %d: got %+v, want %+v", spread, i, got, want)
			}
			now = got.at
		}
	}
}

// TestQueueRefillReturns: what a refill brought down (queue.moved) is
// the next to come out when nothing is pushed meanwhile (the run loop
// prefetches their calls); a large bucket becomes the run instead, whose
// events come out in order from its end.
func TestQueueRefillReturns(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	var q queue
	for i := range 5000 {
		q.push(event{at: rnd.Int64N(1 << 30), id: uint32(i)})
	}
	var refills, runs int
	for q.len() > 0 {
		e := q.min()
		if q.from >= 0 {
			if r := q.runs[q.from]; len(r) > 1 && r[len(r)-2].at < e.at {
				t.Fatalf("the run's end is %d, after it %d", e.at, r[len(r)-2].at)
			}
		}
		if q.moved == nil {
			if q.from >= 0 && len(q.runs[q.from]) == cap(q.runs[q.from]) && len(q.runs[q.from]) >= runMin {
				runs++
			}
			q.pop()
			continue
		}
		next := append([]event(nil), q.moved...)
		q.moved = nil
		refills++
		ids := map[uint32]bool{}
		for _, e := range next {
			ids[e.id] = true
		}
		for range next {
			e := q.min()
			q.pop()
			if !ids[e.id] {
				t.Fatalf("event %d came out among the %d refill returned, but was not one of them", e.id, len(next))
			}
		}
	}
	if refills == 0 {
		t.Error("no refill brought events down")
	}
}

// TestQueueRun: a bucket of runMin events or more is sorted into a run,
// and events pushed while runs are taken, some at their times, come out
// in time order, the latest pushed first among equal times (the reference
// is lifoRef, as in TestQueueTiesLastInFirstOut), also when several runs
// are taken at once.
func TestQueueRun(t *testing.T) {
	tests := []struct {
		name   string
		first  int   // events pushed at once; then, after most pops, one more, up to 4 times as many in all
		spread int64 // how far ahead of now a push lands
	}{
		{"wide", 4 * runMin, 1 << 24},
		{"ties", 4 * runMin, 16},
		{"late", 8 * runMin, 1 << 40},
		{"many", 64 * runMin, 1 << 30},
	}
	most := 0 // runs taken at once
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(9, uint64(tt.spread)))
			var q queue
			ref := &lifoRef{}
			seq := 0
			push := func(at int64) {
				e := event{at: at, id: uint32(seq)}
				q.push(e)
				heap.Push(ref, lifoItem{e, seq})
				seq++
			}
			for range tt.first {
				push(rnd.Int64N(tt.spread))
			}
			now, runs := int64(0), 0
			for ref.Len() > 0 {
				got, want := q.min(), heap.Pop(ref).(lifoItem).e
				if q.from >= 0 && len(q.runs[q.from])+1 > runMin/2 {
					runs++
				}
				most = max(most, q.nr)
				q.pop()
				q.moved = nil
				if got != want {
					t.Fatalf("got %+v, want %+v", got, want)
				}
				now = got.at
				if seq < 4*tt.first && rnd.IntN(4) > 0 {
					push(now + rnd.Int64N(tt.spread))
				}
			}
			if runs == 0 {
				t.Error("no event came out of a run")
			}
		})
	}
	if most < 2 {
		t.Errorf("at most %d run taken at once, want several", most)
	}
}

// tieRef is the radix heap with the plainest refill: every event of the
// lowest bucket pushed again.
type tieRef struct {
	last int64
	n    int
	b    [65][]event
}

func (r *tieRef) push(e event) {
	i := bits.Len64(uint64(e.at ^ r.last))
	r.b[i] = append(r.b[i], e)
	r.n++
}

func (r *tieRef) min() event {
	if len(r.b[0]) == 0 {
		i := 1
		for len(r.b[i]) == 0 {
			i++
		}
		bi := r.b[i]
		r.b[i] = nil
		r.last = bi[0].at
		for _, e := range bi {
			r.last = min(r.last, e.at)
		}
		r.n -= len(bi)
		for _, e := range bi {
			r.push(e)
		}
	}
	return r.b[0][len(r.b[0])-1]
}

func (r *tieRef) pop() {
	r.b[0] = r.b[0][:len(r.b[0])-1]
	r.n--
}

// times is a min-heap of instants (container/heap), the reference queue.
type times []int64

func (h times) Len() int           { return len(h) }
func (h times) Less(i, j int) bool { return h[i] < h[j] }
func (h times) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *times) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *times) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestQueueTiesLastInFirstOut pins the tie order in a form that does not
// depend on how the queue is built: of the events of one time, the one
// pushed last comes out first. (Events of one time always sit in one
// bucket, in the order they were pushed, since a refill moves a whole
// bucket in order; bucket 0 pops from its end.) The reference is a heap
// ordered by time, then by push sequence, latest first.
func TestQueueTiesLastInFirstOut(t *testing.T) {
	for _, spread := range []int64{2, 5, 64, 1 << 20} {
		rnd := rand.New(rand.NewPCG(7, uint64(spread)))
		var q queue
		ref := &lifoRef{}
		now := int64(0)
		for i := range 50_000 {
			if rnd.IntN(3) > 0 || ref.Len() == 0 {
				e := event{at: now + rnd.Int64N(spread), id: uint32(i)}
				q.push(e)
				heap.Push(ref, lifoItem{e, i})
				continue
			}
			got, want := q.min(), heap.Pop(ref).(lifoItem).e
			q.pop()
			if got != want {
				t.Fatalf("spread %d, op %d: got %+v, want %+v", spread, i, got, want)
			}
			now = got.at
		}
	}
}

type lifoItem struct {
	e   event
	seq int
}

// lifoRef is a heap of events by time, the latest pushed first among
// equal times (container/heap).
type lifoRef []lifoItem

func (h lifoRef) Len() int { return len(h) }
func (h lifoRef) Less(i, j int) bool {
	if h[i].e.at != h[j].e.at {
		return h[i].e.at < h[j].e.at
	}
	return h[i].seq > h[j].seq
}
func (h lifoRef) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lifoRef) Push(x any)   { *h = append(*h, x.(lifoItem)) }
func (h *lifoRef) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
