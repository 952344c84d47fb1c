package sim

import (
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/tools/internal/hist"
)

// fifo is a ring buffer of job indices.
type fifo struct {
	buf        []int32
	head, size int
}

func (f *fifo) push(x int32) {
	if f.size == len(f.buf) {
		nb := make([]int32, max(16, 2*len(f.buf)))
		for i := range f.size {
			nb[i] = f.buf[(f.head+i)%len(f.buf)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.size)%len(f.buf)] = x
	f.size++
}

func (f *fifo) pop() int32 {
	x := f.buf[f.head]
	f.head = (f.head + 1) % len(f.buf)
	f.size--
	return x
}

type outageState struct {
	start, end   int64
	failure      float64
	res          uint8   // what a failed request is answered
	class        string  // as the file wrote it, for reports
	tail         bool    // the service's slow tail (ServiceSpec.Tail), not an outage
	drop         bool    // no answer at all
	slow         bool    // nothing fails; served requests take service
	service      sampler // a slow outage's service time
	recoverBelow float64 // attempts per window; 0 means on time
	recovered    bool
	recoveredAt  int64
}

type node struct {
	spec      *ServiceSpec
	record    bool
	workers   int // 0: unlimited
	busy      int
	qmax      int // -1: unbounded
	q         fifo
	draining  bool
	service   sampler
	rejectT   sampler // service time of a rejected endpoint's request
	latency   sampler
	failTime  sampler
	failure   float64
	reject    []bool // by endpoint
	allowance int64  // per minute; 0: none
	minute    int64
	used      int64
	outages   []outageState
	slowing   bool  // some outage is of class slow
	cancel    bool  // a worker stops when its caller leaves (CancelOnAbandon)
	down      int32 // the service called, -1 none
	pol       *policy
	rp        *recoil.Policy
	version   uint64
	// script, if set, answers every attempt in place of the model: the
	// result of attempt n of its call, a server wait, and how long the
	// answer takes (the conformance suite's scripted dependency).
	// resDropped answers nothing.
	script func(n int) (res uint8, wait, after int64)

	// Arrivals per window: the current window and the one before.
	win, winN, prevN int64
	peak, peakAt     int64

	m nodeMetrics
}

type nodeMetrics struct {
	arrivals, served, writes int64
	abandoned                int64 // served for a caller who had stopped waiting
	res                      [nRes]int64
	epArr, epThr             []int64
	busy, queue              level
	maxQueue                 int
	wait                     hist.Hist
	iArr, iThr, iOK, iDone   int64
	series                   []Sample
}

// arrive counts an arrival at n for the peak and the recovery check.
func (w *world) arrive(n *node, j *job) {
	now := w.now
	wi := now / w.window
	switch wi {
	case n.win:
		n.winN++
	case n.win + 1:
		n.prevN, n.win, n.winN = n.winN, wi, 1
	default:
		n.prevN, n.win, n.winN = 0, wi, 1
	}
	j.arrive = now
	n.m.iArr++ // the time series covers the warmup too
	if now >= w.warm {
		j.counted = true
		n.m.arrivals++
		n.m.epArr[j.ep]++
		if n.winN > n.peak {
			n.peak, n.peakAt = n.winN, wi*w.window
		}
	}
}

// outage returns the outage n is in at the current instant, if any: one
// that fails requests, or with slow set, one that slows them.
func (w *world) outage(n *node, slow bool) *outageState {
	for i := range n.outages {
		o := &n.outages[i]
		if w.now < o.start || o.recovered || o.slow != slow {
			continue
		}
		if w.now < o.end || (o.recoverBelow > 0 && float64(n.prevN) > o.recoverBelow) {
			return o
		}
		o.recovered, o.recoveredAt = true, w.now
		if o.recoverBelow == 0 {
			o.recoveredAt = o.end
		}
	}
	return nil
}

// reach handles an attempt arriving at a service: outage, allowance, queue.
func (w *world) reach(ji int32) {
	j := w.jobs.get(ji)
	n := &w.nodes[j.node]
	w.arrive(n, j)
	if n.script != nil {
		var after int64
		j.res, j.wait, after = n.script(w.calls.get(j.call).rc.Attempts())
		switch {
		case j.res == resDropped:
			w.jobs.release(ji)
		case after > 0:
			if j.counted {
				n.m.res[j.res]++
			}
			w.answer(ji, after)
		default:
			w.refuse(n, ji, j)
		}
		return
	}
	if len(n.outages) > 0 {
		if o := w.outage(n, false); o != nil && (o.failure >= 1 || w.rnd.Float64() < o.failure) {
			if o.drop {
				if j.counted {
					n.m.res[resDropped]++
				}
				j.acct = nil
				w.jobs.release(ji) // never answered: the caller times out
				return
			}
			j.res = o.res
			w.refuse(n, ji, j)
			return
		}
	}
	if n.allowance > 0 {
		m := w.now / int64(time.Minute)
		if m != n.minute {
			n.minute, n.used = m, 0
		}
		if n.used >= n.allowance {
			j.res = resThrottled
			j.wait = (m+1)*int64(time.Minute) - w.now
			n.m.iThr++
			if j.counted {
				n.m.epThr[j.ep]++
			}
			w.refuse(n, ji, j)
			return
		}
		n.used++
	}
	switch {
	case n.workers == 0 || n.busy < n.workers:
		w.startWork(n, ji, j)
	case n.qmax < 0 || n.q.size < n.qmax:
		n.m.queue.update(w.now, w.warm, n.q.size)
		n.q.push(ji)
		n.m.maxQueue = max(n.m.maxQueue, n.q.size)
	default:
		j.res = resFull
		w.refuse(n, ji, j)
	}
}

// refuse answers a job at once, or after the service's FailTime.
func (w *world) refuse(n *node, ji int32, j *job) {
	if j.counted {
		n.m.res[j.res]++
	}
	var d int64
	if !n.failTime.zero() {
		d += n.failTime.draw(w.rnd)
	}
	if !n.latency.zero() {
		d += n.latency.draw(w.rnd)
	}
	w.answer(ji, d)
}

// startWork gives a job a worker.
func (w *world) startWork(n *node, ji int32, j *job) {
	n.m.busy.update(w.now, w.warm, n.busy)
	n.busy++
	j.worker = true
	if j.counted {
		n.m.served++
		n.m.wait.Add(time.Duration(w.now - j.arrive))
	}
	if j.deadline > 0 && w.now >= j.deadline {
		j.res = resExpired // nobody is waiting for it any more (hop protocol)
		w.finish(ji)
		return
	}
	if n.cancel && w.left(j) {
		j.res = resCancelled // the worker sees its caller has hung up
		w.finish(ji)
		return
	}
	st := &n.service
	if n.reject != nil && n.reject[j.ep] && !n.rejectT.zero() {
		st = &n.rejectT
	} else if n.slowing {
		if o := w.outage(n, true); o != nil && (o.failure >= 1 || w.rnd.Float64() < o.failure) {
			st = &o.service
		}
	}
	if !st.zero() {
		done := w.now + st.draw(w.rnd)
		if n.cancel && j.gone > 0 {
			done = min(done, j.gone) // stops when the caller hangs up
		}
		w.schedule(done, evDone, ji, 0)
		return
	}
	w.work(ji)
}

// left reports whether the caller of j has stopped waiting for it: its
// attempt timed out or ended.
func (w *world) left(j *job) bool {
	return !w.live(j) || (j.gone > 0 && w.now >= j.gone)
}

// live reports whether the caller of j still waits for its answer: j is
// the attempt its call has outstanding, or one of a hedged call's attempts
// in flight.
func (w *world) live(j *job) bool {
	if j.hedged {
		return w.flying(j.call, j.cgen) >= 0
	}
	c := w.calls.get(j.call)
	return c.out && c.gen == j.cgen
}

// work decides a job whose worker finished its own work: a permanent or a
// random failure, a call below, or success.
func (w *world) work(ji int32) {
	j := w.jobs.get(ji)
	n := &w.nodes[j.node]
	switch {
	case n.cancel && w.left(j):
		j.res = resCancelled
	case n.reject != nil && n.reject[j.ep]:
		j.res = resPermanent
	case n.failure > 0 && w.rnd.Float64() < n.failure:
		j.res = resFail
	case n.down >= 0:
		ci := w.newCall(ji, -1, n.down, n.pol, n.rp, j.ep)
		w.begin(ci)
		return
	default:
		j.res = resOK
	}
	w.finish(ji)
}

// finish completes a job: it frees the worker, which takes the next job in
// the queue, and replies.
func (w *world) finish(ji int32) {
	j := w.jobs.get(ji)
	n := &w.nodes[j.node]
	if j.counted {
		n.m.res[j.res]++
	}
	if j.res == resOK {
		n.m.iOK++
	}
	if j.acct != nil {
		j.spent = int32(j.acct.Spent())
	}
	if j.worker {
		if j.counted && j.res != resExpired && j.res != resCancelled {
			// Work done for nobody: the caller's attempt timed out (or its
			// call ended) while the job queued or was served.
			if !w.live(j) {
				n.m.abandoned++
			}
		}
		j.worker = false
		n.m.busy.update(w.now, w.warm, n.busy)
		n.busy--
		if !n.draining {
			n.draining = true
			for n.q.size > 0 && n.busy < n.workers {
				n.m.queue.update(w.now, w.warm, n.q.size)
				next := n.q.pop()
				w.startWork(n, next, w.jobs.get(next))
			}
			n.draining = false
		}
	}
	var d int64
	if !n.latency.zero() {
		d = n.latency.draw(w.rnd)
	}
	w.answer(ji, d)
}

// answer sends a job's answer to its call, arriving after d, and frees the
// job. An answer nobody waits for (an orphan: the caller timed out and moved
// on) is dropped at once. The answer travels in the call, not the job: the
// event names the call and the attempt, and an attempt that ends before it
// arrives makes it stale; a later attempt's answer always overwrites an
// earlier one's, since it is sent later.
func (w *world) answer(ji int32, d int64) {
	j := w.jobs.get(ji)
	if j.hedged {
		w.hedgeAnswer(ji, j, d)
		return
	}
	ci, gen := j.call, j.cgen
	c := w.calls.get(ci)
	live := c.out && c.gen == gen
	if live {
		c.res, c.wait, c.spent = j.res, j.wait, j.spent
	}
	j.acct = nil
	w.jobs.release(ji)
	switch {
	case !live:
	case d > 0:
		w.schedule(w.now+d, evReply, ci, gen)
	default:
		w.result(ci, c.res, c.wait, c.spent)
	}
}
