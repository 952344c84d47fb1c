package sim

import (
	"errors"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/tools/internal/hist"
)

// Event kinds.
const (
	evArrival uint8 = iota + 1 // an open-loop client's next call: id = client
	evBegin                    // a closed-loop caller begins a call: id = call
	evAttempt                  // a call's next attempt, after its wait: id = call
	evTimeout                  // a call's attempt timed out: id = call, gen
	evReach                    // an attempt reaches its service: id = job
	evDone                     // a worker finished its own work on a job: id = job
	evReply                    // an attempt's answer reaches the caller: id = call, gen
	evRead                     // record: the read reaches the record: id = job
	evWrite                    // record: the write reaches the record: id = job
	evSample                   // take a sample of the time series
	evSerial                   // an attempt leaves a serialising transport: id = job
)

// What an attempt came to, at the service or at the caller.
const (
	resOK        uint8 = iota
	resFail            // the service failed it: a 500
	resDown            // an outage
	resFull            // the queue was full: a 503
	resThrottled       // over the allowance: a 429 with Retry-After
	resPermanent       // a validator's 400
	resExpired         // the caller's deadline had passed before work began (hop)
	resConflict        // record: the version changed since the read
	resUpstream        // a layer's call below failed: a 502
	resRefused         // a layer's call below was refused or overloaded: a 503
	resTimeout         // the caller's own attempt timeout
	resDown503         // an outage that reads as overloaded
	resDropped         // an outage that answers nothing
	resCancelled       // the caller left and the worker noticed (CancelOnAbandon)
	nRes
)

var resNames = [nRes]string{"ok", "500", "down", "queue full", "429", "400", "expired", "conflict", "502", "503", "timeout", "down 503", "dropped", "cancelled"}

var resErr = func() (e [nRes]error) {
	for i, n := range resNames {
		e[i] = errors.New("sim: " + n)
	}
	return
}()

// call is one logical call: a client's, or a layer's call below on behalf
// of one of its jobs. It drives a real recoil.Call on virtual time.
type call struct {
	rc      recoil.Call
	rp      *recoil.Policy
	pol     *policy
	acct    *hop.Account // the hop protocol's account, nil when off
	start   int64
	gen     uint32
	target  int32
	owner   int32 // the job this call serves, or -1 for a client's call
	client  int32
	left    int32 // closed loop: calls still to make; -1 means unlimited
	ep      uint16
	last    uint8 // the last attempt's result
	out     bool  // an attempt is outstanding
	closed  bool  // a closed-loop caller's slot, kept between calls
	counted bool  // begun after the warmup
	again   bool  // a closed-loop caller's resubmission of a failed call
	task    int64 // when a closed-loop caller began the call it is resubmitting

	// The answer of the outstanding attempt, on its way (see answer).
	res   uint8
	spent int32
	wait  int64

	// jit is a closed-loop caller's own jitter stream
	// (Scenario.JitterSource); nil means its policy's.
	jit *rand.Rand

	// own is a closed-loop caller's own policy, when it has one: kept in
	// the caller's slot, next to the call that uses it. It comes last, so
	// that the run loop need not load it when no caller has one.
	own recoil.Policy
}

// job is one attempt at a service, from arrival to reply.
type job struct {
	arrive   int64
	deadline int64 // the caller's deadline, carried by the hop protocol; 0 none
	gone     int64 // when the caller's attempt times out; 0 never
	wait     int64 // Retry-After of a 429
	ver      uint64
	acct     *hop.Account
	call     int32
	cgen     uint32
	node     int32
	budget   int32 // the hop budget the attempt carried; -1 none
	spent    int32 // the hop protocol's report: retries spent at and below
	ep       uint16
	res      uint8
	worker   bool
	counted  bool
}

// slab stores entities in fixed chunks, so pointers stay valid while it
// grows, and reuses freed slots: memory follows the entities in flight.
type slab[T any] struct {
	chunks [][]T
	free   []int32
	n      int32
}

const chunkBits = 12

func (s *slab[T]) get(i int32) *T { return &s.chunks[i>>chunkBits][i&(1<<chunkBits-1)] }

func (s *slab[T]) alloc() int32 {
	if k := len(s.free); k > 0 {
		i := s.free[k-1]
		s.free = s.free[:k-1]
		return i
	}
	i := s.n
	if int(i>>chunkBits) == len(s.chunks) {
		s.chunks = append(s.chunks, make([]T, 1<<chunkBits))
	}
	s.n++
	return i
}

func (s *slab[T]) release(i int32) { s.free = append(s.free, i) }

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

// level integrates a quantity over time, for its time average.
type level struct {
	last int64
	area float64
}

func (l *level) update(now, warm int64, cur int) {
	if from := max(l.last, warm); now > from {
		l.area += float64(cur) * float64(now-from)
	}
	l.last = max(l.last, now)
}

type outageState struct {
	start, end   int64
	failure      float64
	class        recoil.Class
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
	// result of attempt n of its call, and a server wait (the conformance
	// suite's scripted dependency). resDropped answers nothing.
	script func(n int) (res uint8, wait int64)

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
	iArr, iThr, iOK          int64
	series                   []Sample
}

type client struct {
	spec     *ClientSpec
	ep       uint16
	target   int32
	perNs    float64
	rnd      *rand.Rand
	pol      *policy
	rp       *recoil.Policy   // the first replica's
	rps      []*recoil.Policy // every replica's, when there are several
	next     int              // the replica the next open-loop call goes to
	start    sampler
	think    sampler
	resubmit sampler
	serial   *serial // its serialising transport, if it has one

	calls, ok, failed, attempts, throttled, resubmits int64
	reasons                                           [16]int64
	lat                                               hist.Hist
}

// world is one run: one scenario, one compared policy, one seed.
type world struct {
	now    int64
	until  int64
	warm   int64
	window int64
	sample int64
	q      queue
	events uint64
	last   int64 // the last event other than a sample
	// pendingSum adds up the queue's length at every event, for the mean
	// number of events in flight.
	pendingSum uint64

	rnd  *rand.Rand // services
	prnd *rand.Rand // policies' jitter

	nodes   []node
	clients []client
	calls   slab[call]
	jobs    slab[job]

	endpoints []string
	target    int

	progress func(float64)

	// callBytes is how much of a call the run loop prefetches: all of it
	// if some caller owns its policy, otherwise up to own.
	callBytes uintptr
}

// schedule adds an event at t (never before now).
func (w *world) schedule(t int64, kind uint8, id int32, gen uint32) {
	w.q.push(event{at: max(t, w.now), id: uint32(id), aux: uint32(kind)<<24 | gen&genMask})
}

// run handles events in time order until none are left or the next is after
// until.
func (w *world) run() {
	for w.q.n > 0 {
		if w.q.mask&1 == 0 {
			w.lookahead(w.q.refill())
		}
		e := w.q.min()
		if e.at > w.until {
			break
		}
		w.q.pop()
		w.now = e.at
		w.events++
		w.pendingSum += uint64(w.q.n + 1)
		if w.q.n > 0 {
			// Start loading the next event's call while this one is handled:
			// with 100,000 callers it is not in the cache. Every line it
			// will use (see callBytes).
			switch nx := w.q.peek(); nx.kind() {
			case evAttempt, evReply, evTimeout, evBegin:
				prefetch(unsafe.Pointer(w.calls.get(int32(nx.id))), w.callBytes)
			}
		}
		id := int32(e.id)
		switch e.kind() {
		case evAttempt:
			w.attempt(id)
		case evReply:
			if c := w.calls.get(id); c.out && c.gen == e.gen() {
				w.result(id, c.res, c.wait, c.spent)
			}
		case evDone:
			w.work(id)
		case evReach:
			w.reach(id)
		case evTimeout:
			if c := w.calls.get(id); c.out && c.gen == e.gen() {
				w.result(id, resTimeout, 0, 0)
			}
		case evArrival:
			w.arrival(id)
		case evBegin:
			w.begin(id)
		case evRead:
			w.read(id)
		case evWrite:
			w.write(id)
		case evSample:
			w.takeSample()
		case evSerial:
			w.serialLeave(id)
		}
		if e.kind() != evSample {
			w.last = w.now
		}
		if w.progress != nil && w.events&(1<<16-1) == 0 {
			w.progress(float64(w.now) / float64(w.until))
		}
	}
	if w.q.n > 0 {
		w.now = w.until // stopped at the end of the duration
	} else {
		w.now = w.last // ran out of work: ended with the last real event
	}
}

// arrival begins an open-loop client's call and schedules the next.
func (w *world) arrival(id int32) {
	cl := &w.clients[id]
	rp := cl.rp
	if len(cl.rps) > 1 { // deal the calls to the replicas in turn
		rp = cl.rps[cl.next]
		cl.next = (cl.next + 1) % len(cl.rps)
	}
	ci := w.newCall(-1, id, cl.target, cl.pol, rp, cl.ep)
	if next := w.now + int64(cl.rnd.ExpFloat64()/cl.perNs); next < w.until {
		w.schedule(next, evArrival, id, 0)
	}
	w.begin(ci)
}

// newCall takes a call slot, keeping its generation counter.
func (w *world) newCall(owner, cli, target int32, pol *policy, rp *recoil.Policy, ep uint16) int32 {
	ci := w.calls.alloc()
	c := w.calls.get(ci)
	c.owner, c.client, c.target, c.pol, c.rp, c.ep, c.left = owner, cli, target, pol, rp, ep, -1
	c.acct, c.out, c.closed, c.counted, c.again, c.jit = nil, false, false, false, false, nil
	return ci
}

// begin starts a logical call and its first attempt.
func (w *world) begin(ci int32) {
	c := w.calls.get(ci)
	now := w.now
	c.start = now
	var parent *job
	var dl time.Time
	if c.owner >= 0 {
		parent = w.jobs.get(c.owner)
		// The caller's deadline, less the protocol's margin for the answer
		// to travel back (hop.DefaultDeadlineMargin).
		if parent.deadline > 0 {
			dl = vt(max(parent.deadline-int64(hop.DefaultDeadlineMargin), now+1))
		}
	}
	// The policy's Timeout, if any, comes off the same deadline.
	c.rc = c.rp.Begin(vt(now), dl)
	if c.jit != nil {
		c.rc.SetJitter(c.jit)
	}
	c.acct = nil
	if c.pol.hop > 0 {
		switch {
		case parent != nil && parent.acct != nil:
			c.acct = parent.acct // the account of the request this layer serves
		case parent != nil && parent.budget >= 0:
			parent.acct = hop.NewAccount(int(parent.budget))
			c.acct = parent.acct
		default: // an edge, or a caller that does not speak the protocol
			c.acct = hop.NewAccount(c.pol.hop)
			if parent != nil {
				parent.acct = c.acct
			}
		}
		c.rc.SetRequestBudget(c.acct)
	}
	if c.owner < 0 && !c.again {
		c.task = now
		c.counted = now >= w.warm
		if c.counted {
			w.clients[c.client].calls++
		}
	}
	c.again = false
	w.attempt(ci)
}

// attempt does what the call's engine says next: send its next attempt, or
// end the call (a budget, breaker or limiter refused it, or its deadline
// passed).
func (w *world) attempt(ci int32) {
	c := w.calls.get(ci)
	now := w.now
	s := c.rc.Next(vt(now))
	if s.Kind != recoil.StepAttempt {
		w.end(ci, false, reasonOf(s.Err))
		return
	}
	c.gen = (c.gen + 1) & genMask
	c.out = true
	if c.owner < 0 && c.counted {
		w.clients[c.client].attempts++
	}
	var tmo int64
	if !s.Deadline.IsZero() {
		tmo = s.Deadline.Sub(epoch).Nanoseconds()
		w.schedule(tmo, evTimeout, ci, c.gen)
	}
	ji := w.jobs.alloc()
	j := w.jobs.get(ji)
	*j = job{call: ci, cgen: c.gen, node: c.target, ep: c.ep, budget: -1}
	j.gone = tmo
	if c.acct != nil {
		j.budget = int32(c.acct.Remaining())
		j.deadline = tmo
	}
	if w.serialSend(ci, ji) {
		return
	}
	n := &w.nodes[c.target]
	switch {
	case n.record:
		w.schedule(now+n.latency.draw(w.rnd), evRead, ji, 0)
	case !n.latency.zero():
		w.schedule(now+n.latency.draw(w.rnd), evReach, ji, 0)
	default:
		w.reach(ji)
	}
}

func reasonOf(err error) recoil.Reason {
	if e, ok := err.(*recoil.Error); ok {
		return e.Reason
	}
	return recoil.ReasonNone
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
		j.res, j.wait = n.script(w.calls.get(j.call).rc.Attempts())
		if j.res == resDropped {
			w.jobs.release(ji)
			return
		}
		w.refuse(n, ji, j)
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
			j.res = resDown
			if o.class == recoil.ClassOverloaded {
				j.res = resDown503
			}
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
	c := w.calls.get(j.call)
	return !c.out || c.gen != j.cgen || (j.gone > 0 && w.now >= j.gone)
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
			if c := w.calls.get(j.call); !c.out || c.gen != j.cgen {
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

// verdictOf is how a careful transport classifies what came back.
func verdictOf(res uint8, wait int64) recoil.Verdict {
	switch res {
	case resThrottled:
		return recoil.Verdict{Class: recoil.ClassThrottled, Wait: time.Duration(wait), Code: "rate_limit", Reason: "over the organisation's allowance"}
	case resPermanent:
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: "invalid_request", Reason: "validator rejected the request"}
	case resFull, resRefused:
		return recoil.Verdict{Class: recoil.ClassOverloaded, Reason: "overloaded"}
	case resDown:
		return recoil.Verdict{Class: recoil.ClassTransient, Reason: "down"}
	case resDown503:
		return recoil.Verdict{Class: recoil.ClassOverloaded, Reason: "down"}
	case resTimeout:
		return recoil.Verdict{Class: recoil.ClassTransient, Timeout: true, Reason: "attempt timed out"}
	case resExpired:
		return recoil.Verdict{Class: recoil.ClassTransient, Timeout: true, Reason: "deadline exceeded"}
	case resConflict:
		return recoil.Verdict{Class: recoil.ClassTransient, Code: "conflict", Reason: "version changed"}
	default:
		return recoil.Verdict{Class: recoil.ClassTransient, Reason: resNames[res]}
	}
}

// result reports an attempt's outcome to the call's engine and does what it
// says: schedule the retry after its wait, or end the call.
func (w *world) result(ci int32, res uint8, wait int64, spent int32) {
	c := w.calls.get(ci)
	c.out = false
	c.last = res
	if c.acct != nil && spent > 0 {
		c.acct.Below(int(spent))
	}
	now := vt(w.now)
	if c.owner < 0 && res == resThrottled && c.counted {
		w.clients[c.client].throttled++
	}
	if res == resOK {
		c.rc.Success(now)
		w.end(ci, true, recoil.ReasonNone)
		return
	}
	s := c.rc.Fail(now, resErr[res], *c.pol.verdict(c.rp, res, wait))
	if s.Kind == recoil.StepDone {
		w.end(ci, false, reasonOf(s.Err))
		return
	}
	w.schedule(w.now+int64(s.Wait), evAttempt, ci, 0)
}

// end finishes a logical call: a layer's job carries on with its answer; a
// client counts it and, closed-loop, thinks and calls again.
func (w *world) end(ci int32, ok bool, reason recoil.Reason) {
	c := w.calls.get(ci)
	if c.owner >= 0 {
		ji := c.owner
		j := w.jobs.get(ji)
		switch {
		case ok:
			j.res = resOK
		case reason == recoil.ReasonPermanent || c.last == resPermanent:
			j.res = resPermanent
		case reason == recoil.ReasonBudget || reason == recoil.ReasonCircuitOpen || reason == recoil.ReasonLimit,
			c.last == resThrottled || c.last == resFull || c.last == resRefused || c.last == resDown503:
			j.res = resRefused
		default:
			j.res = resUpstream
		}
		w.calls.release(ci)
		w.finish(ji)
		return
	}
	cl := &w.clients[c.client]
	if c.closed && !ok && !cl.resubmit.zero() {
		// The app begins the call again later; it is one call, still open.
		if c.counted {
			cl.resubmits++
			cl.reasons[reason&15]++
		}
		c.again = true
		w.schedule(w.now+cl.resubmit.draw(cl.rnd), evBegin, ci, 0)
		return
	}
	if c.counted {
		if ok {
			cl.ok++
		} else {
			cl.failed++
			cl.reasons[reason&15]++
		}
		start := c.start
		if c.closed {
			start = c.task
		}
		cl.lat.Add(time.Duration(w.now - start))
	}
	if !c.closed {
		w.calls.release(ci)
		return
	}
	if c.left > 0 {
		c.left--
	}
	if c.left != 0 {
		w.schedule(w.now+cl.think.draw(cl.rnd), evBegin, ci, 0)
	}
}

// read: the read of a record arrives and sees the version.
func (w *world) read(ji int32) {
	j := w.jobs.get(ji)
	n := &w.nodes[j.node]
	w.arrive(n, j)
	if len(n.outages) > 0 {
		if o := w.outage(n, false); o != nil && (o.failure >= 1 || w.rnd.Float64() < o.failure) {
			j.res = resDown
			if o.class == recoil.ClassOverloaded {
				j.res = resDown503
			}
			w.refuse(n, ji, j)
			return
		}
	}
	j.ver = n.version
	w.schedule(w.now+n.latency.draw(w.rnd)+n.latency.draw(w.rnd), evWrite, ji, 0)
}

// write: the conditional write arrives; it succeeds if the version is the
// one read.
func (w *world) write(ji int32) {
	j := w.jobs.get(ji)
	n := &w.nodes[j.node]
	if j.counted {
		n.m.writes++
	}
	if n.version == j.ver {
		n.version++
		j.res = resOK
	} else {
		j.res = resConflict
	}
	if j.counted {
		n.m.res[j.res]++
	}
	if j.res == resOK {
		n.m.iOK++
	}
	w.answer(ji, n.latency.draw(w.rnd))
}

// maxSamples bounds a time series: past it, neighbouring samples merge.
const maxSamples = 4096

func (w *world) takeSample() {
	now := w.now
	for i := range w.nodes {
		n := &w.nodes[i]
		m := &n.m
		dt := w.sample
		if k := len(m.series); k > 0 {
			dt = now - int64(m.series[k-1].T)
		}
		m.series = append(m.series, Sample{T: time.Duration(now), Dt: time.Duration(dt), Arrivals: m.iArr, Throttled: m.iThr, Succeeded: m.iOK, Queue: n.q.size, Busy: n.busy})
		m.iArr, m.iThr, m.iOK = 0, 0, 0
		if len(m.series) >= maxSamples {
			m.series = decimate(m.series)
		}
	}
	if len(w.nodes) > 0 && len(w.nodes[0].m.series) == maxSamples/2 {
		w.sample *= 2 // the series was decimated: sample half as often from now on
	}
	if w.q.n > 0 { // something else is pending
		w.schedule(now+w.sample, evSample, 0, 0)
	}
}

// decimate merges neighbouring samples: sums add, levels keep the later.
func decimate(s []Sample) []Sample {
	out := s[:0]
	for i := 0; i+1 < len(s); i += 2 {
		a, b := s[i], s[i+1]
		out = append(out, Sample{T: b.T, Dt: a.Dt + b.Dt, Arrivals: a.Arrivals + b.Arrivals, Throttled: a.Throttled + b.Throttled, Succeeded: a.Succeeded + b.Succeeded, Queue: b.Queue, Busy: b.Busy})
	}
	if len(s)%2 == 1 {
		out = append(out, s[len(s)-1])
	}
	return out
}
