package sim

import (
	"errors"
	"math/rand/v2"
	"unsafe"

	"github.com/recoil-go/recoil/hop"
)

// Event kinds.
const (
	evArrival  uint8 = iota + 1 // an open-loop client's next call: id = client
	evBegin                     // a closed-loop caller begins a call: id = call
	evAttempt                   // a call's next attempt, after its wait: id = call
	evTimeout                   // a call's attempt timed out: id = call, gen
	evReach                     // an attempt reaches its service: id = job
	evDone                      // a worker finished its own work on a job: id = job
	evReply                     // an attempt's answer reaches the caller: id = call, gen
	evRead                      // record: the read reaches the record: id = job
	evWrite                     // record: the write reaches the record: id = job
	evSample                    // take a sample of the time series
	evSerial                    // an attempt leaves a serialising transport: id = job
	evHReply                    // a hedged call's attempt's answer reaches the caller: id = call, gen
	evHTimeout                  // a hedged call's attempt timed out: id = call, gen
	evHedge                     // a hedged call's hedge delay has passed: id = call, gen = its timer's
)

// What an attempt came to, at the service or at the caller.
const (
	resOK           uint8 = iota
	resFail               // the service failed it: a 500
	resDown               // an outage
	resFull               // the queue was full: a 503
	resThrottled          // over the allowance: a 429 with Retry-After
	resPermanent          // a validator's 400
	resExpired            // the caller's deadline had passed before work began (hop)
	resConflict           // record: the version changed since the read
	resUpstream           // a layer's call below failed: a 502
	resRefused            // a layer's call below was refused or overloaded: a 503
	resTimeout            // the caller's own attempt timeout
	resDown503            // an outage that reads as overloaded
	resDropped            // an outage that answers nothing
	resCancelled          // the caller left and the worker noticed (CancelOnAbandon)
	resNotFound           // an outage answering 404 model_not_found: a retired model
	resUnauthorized       // an outage answering 401 invalid_api_key: a revoked key
	resQuota              // an outage answering 429 insufficient_quota: a spent quota
	nRes
)

var resNames = [nRes]string{"ok", "500", "down", "queue full", "429", "400", "expired", "conflict", "502", "503", "timeout", "overloaded", "dropped", "cancelled",
	"404", "401", "429 quota"}

var resErr = func() (e [nRes]error) {
	for i, n := range resNames {
		e[i] = errors.New("sim: " + n)
	}
	return
}()

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
	hedged   bool // an attempt of a hedged call: cgen names one of its flights
}

// slab stores entities in fixed chunks, so pointers stay valid while it
// grows, and reuses freed slots: memory follows the entities in flight.
type slab[T any] struct {
	chunks []*[chunkSize]T // arrays, not slices: get checks one bound, not two
	free   []int32
	n      int32
}

const (
	chunkBits = 12
	chunkSize = 1 << chunkBits
)

func (s *slab[T]) get(i int32) *T { return &s.chunks[i>>chunkBits][i&(chunkSize-1)] }

func (s *slab[T]) alloc() int32 {
	if k := len(s.free); k > 0 {
		i := s.free[k-1]
		s.free = s.free[:k-1]
		return i
	}
	i := s.n
	if int(i>>chunkBits) == len(s.chunks) {
		s.chunks = append(s.chunks, new([chunkSize]T))
	}
	s.n++
	return i
}

func (s *slab[T]) release(i int32) { s.free = append(s.free, i) }

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
	// hedges holds each hedged call's attempts in flight, by the call's
	// index; empty when no policy hedges.
	hedges []hedging

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
		e := w.q.min()
		if w.q.moved != nil {
			w.lookahead(w.q.moved)
			w.q.moved = nil
		}
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
		case evHReply:
			w.hedgeReply(id, e.gen(), false)
		case evHTimeout:
			w.hedgeReply(id, e.gen(), true)
		case evHedge:
			w.hedgeDue(id, e.gen())
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
