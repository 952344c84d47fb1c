package limit

import "github.com/recoil-go/recoil/internal/priority"

// waiter is one caller queued in Acquire or AcquireAs, by either limiter.
type waiter struct {
	ready      chan struct{} // closed once granted or evicted
	granted    bool          // guarded by the queue's lock: a slot was handed over
	evicted    bool          // guarded by the queue's lock: shed to make room for a better rank
	rank       int           // priority.Rank of the attempt
	prev, next *waiter       // guarded by the queue's lock
}

// rankQueue is a limiter's wait queue: best rank first, FIFO within a
// rank (see priority.Rank). Its zero value is empty; the limiter that owns
// it guards it with its queue lock, which every method needs held.
type rankQueue [priority.Ranks]struct{ head, tail *waiter }

// push appends w to its rank's queue.
func (q *rankQueue) push(w *waiter) {
	r := &q[w.rank]
	w.prev = r.tail
	if r.tail != nil {
		r.tail.next = w
	} else {
		r.head = w
	}
	r.tail = w
}

// remove unlinks w from its rank's queue.
func (q *rankQueue) remove(w *waiter) {
	r := &q[w.rank]
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		r.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		r.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

// first returns the waiter served next: the oldest of the best rank
// queued, or nil.
func (q *rankQueue) first() *waiter {
	for r := range q {
		if w := q[r].head; w != nil {
			return w
		}
	}
	return nil
}

// evictWorse unlinks the newest waiter of the worst rank below rank, marks
// it evicted and wakes it, to make room for a caller of rank; false if
// every waiter ranks as well. The caller takes one from its queued count.
func (q *rankQueue) evictWorse(rank int) bool {
	for r := priority.Ranks - 1; r > rank; r-- {
		if w := q[r].tail; w != nil {
			q.remove(w)
			w.evicted = true
			close(w.ready)
			return true
		}
	}
	return false
}

// grant unlinks w, marks it granted and wakes it.
func (q *rankQueue) grant(w *waiter) {
	q.remove(w)
	w.granted = true
	close(w.ready)
}
