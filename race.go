package recoil

import (
	"context"
	"sync"
	"time"
)

// This file is how Drive runs a hedged call's attempts beside each other.
// The loop is the same (drive.go): each attempt Next admits runs on the
// caller's goroutine; while it runs, the hedge timer may fire, and Call.Hedge
// may admit a hedge, which runs in a goroutine of its own. Whichever
// goroutine an attempt ran on lands its outcome with the Call itself, under
// the race's lock; the caller's goroutine holds the lock except while it
// is in an attempt or waiting for the attempts beside it. Once an outcome
// decides the call (a success, a failure that ends or retries it), every
// other attempt's context is cancelled and the caller waits for each to
// return, so that nothing runs once Drive does.

// hedging is the state of a hedged call that does not depend on its
// driver, pooled across calls: its Call and route, the lock, and the
// attempts beside the caller's. Its timer and channel are made per call:
// a testing/synctest bubble owns the ones made in it.
type hedging struct {
	call Call
	rt   route
	fl   [2]permit // the backing array of the route's flight
	fire func()    // fired, bound once

	mu      sync.Mutex    // guards everything below and the Call, once the race runs
	wake    chan struct{} // tells the caller an attempt beside landed or returned; made with the first
	timer   *time.Timer   // the hedge timer, calling fired; made on the first arming
	due     time.Time     // when the armed hedge is due; zero when none is
	owner   hedger        // the race the timer fires for; nil while pooled
	inline  context.CancelFunc
	beside  []flightEnd // the attempts beside the caller's still in flight
	own     [2]flightEnd
	running int      // goroutines of attempts beside that have not returned
	decided bool     // an outcome decided the call
	step    StepKind // and what it decided
	wait    time.Duration
}

// hedger is a race, as its timer sees it.
type hedger interface{ hedge() }

// flightEnd is an attempt beside the caller's, and how to cancel it.
type flightEnd struct {
	n   int
	end context.CancelFunc
}

var hedgings = sync.Pool{New: func() any {
	h := new(hedging)
	h.beside = h.own[:0]
	h.fire = h.fired
	return h
}}

// race is a hedged call's loop, shared by the goroutines of its attempts.
type race[T any, D Driver[T]] struct {
	loop[T, D]
	c *Call // &h.call
	h *hedging
}

// newRace returns a race whose lock the caller holds.
func newRace[T any, D Driver[T]]() *race[T, D] {
	h := hedgings.Get().(*hedging)
	h.mu.Lock()
	h.call.rt, h.rt.flight = &h.rt, h.fl[:0] // the rest is zero
	r := &race[T, D]{h: h}
	r.c, r.race = &h.call, r
	h.owner = r
	return r
}

// free returns the race's state to the pool. Every attempt it started has
// returned.
func (r *race[T, D]) free() {
	h := r.h
	h.disarm()
	h.owner, h.inline, h.timer, h.wake = nil, nil, nil, nil
	h.beside = h.beside[:0]
	h.call, h.rt, h.fl = Call{}, route{}, [2]permit{} // hold nothing of the call's while pooled
	h.mu.Unlock()
	hedgings.Put(h)
}

// run makes attempt n on the caller's goroutine, with hedges beside it as
// the Call allows, until an outcome decides the call; it returns that
// decision once every attempt beside has returned.
func (r *race[T, D]) run(n int, cut time.Time) (StepKind, time.Duration) {
	h, l := r.h, &r.loop
	ctx, end := context.WithCancel(l.ctx)
	t := r.c.Target()
	h.inline = end
	h.arm(r.c)
	h.mu.Unlock()
	v, err := l.attempt(ctx, n, t, cut)
	h.mu.Lock()
	h.inline = nil
	if h.decided {
		// An attempt beside decided the call while this one ran: the
		// Call left this one behind.
		l.d.Discard(v)
		end()
	} else {
		r.decide(l.land(r.c, outcome[T]{n: n, v: v, err: err, end: end}))
	}
	for !h.decided {
		h.mu.Unlock()
		select {
		case <-h.wake: // made with the first attempt beside, which is still in flight
		case <-l.ctx.Done():
		}
		h.mu.Lock()
		if !h.decided && l.ctx.Err() != nil {
			r.decide(stepLeft, 0)
		}
	}
	return h.settle()
}

// decide acts on what the Call said of an outcome: StepPending sends the
// next hedge at once, as gRFC A6 does after a failure the others may still
// outrun; anything else decides the call and cancels every other attempt.
func (r *race[T, D]) decide(k StepKind, wait time.Duration) {
	h := r.h
	if k == StepPending {
		r.hedge()
		return
	}
	h.decided, h.step, h.wait = true, k, wait
	h.disarm()
	if h.inline != nil {
		h.inline()
	}
	for _, f := range h.beside {
		f.end()
	}
	h.signal()
}

// signal wakes the caller if it waits for the attempts beside.
func (h *hedging) signal() {
	if h.wake == nil {
		return
	}
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// hedge starts a hedge beside the attempts in flight if the Call admits
// one, and arms the timer for the next; a refused hedge is not asked for
// again while these attempts run. The lock is held.
func (r *race[T, D]) hedge() {
	c, h := r.c, r.h
	s, ok := c.hedge(time.Time{})
	if !ok {
		return
	}
	ctx, end := context.WithCancel(r.ctx)
	h.beside = append(h.beside, flightEnd{n: s.Attempt, end: end})
	if h.wake == nil {
		h.wake = make(chan struct{}, 1)
	}
	h.running++
	go r.besides(ctx, s.Attempt, c.Target(), s.Deadline, end)
	h.arm(c)
}

// besides makes attempt n beside the caller's and lands its outcome,
// unless another has decided the call meanwhile.
func (r *race[T, D]) besides(ctx context.Context, n int, t *Target, cut time.Time, end context.CancelFunc) {
	h, l := r.h, &r.loop
	v, err := l.attempt(ctx, n, t, cut)
	h.mu.Lock()
	defer h.mu.Unlock()
	defer func() {
		h.running--
		h.signal()
	}()
	for i, f := range h.beside {
		if f.n == n {
			h.beside = append(h.beside[:i], h.beside[i+1:]...)
			break
		}
	}
	if h.decided {
		l.d.Discard(v)
		end()
		return
	}
	r.decide(l.land(r.c, outcome[T]{n: n, v: v, err: err, end: end}))
}

// settle waits, with the lock released, for every attempt beside the
// caller's to return, and returns what decided the call.
func (h *hedging) settle() (StepKind, time.Duration) {
	for h.running > 0 {
		h.mu.Unlock()
		<-h.wake
		h.mu.Lock()
	}
	k, wait := h.step, h.wait
	h.decided, h.step, h.wait = false, 0, 0
	if h.wake != nil {
		select {
		case <-h.wake:
		default:
		}
	}
	return k, wait
}

// arm sets the hedge timer for the Call's HedgeAfter, or disarms it when
// the call may start no hedge. The lock is held.
func (h *hedging) arm(c *Call) {
	after := c.HedgeAfter()
	if after <= 0 {
		h.disarm()
		return
	}
	h.due = time.Now().Add(after)
	if h.timer == nil {
		h.timer = time.AfterFunc(after, h.fire)
	} else {
		h.timer.Reset(after)
	}
}

// disarm stops the hedge timer. The lock is held.
func (h *hedging) disarm() {
	if !h.due.IsZero() {
		h.due = time.Time{}
		h.timer.Stop()
	}
}

// fired is the hedge timer's: it asks for a hedge if one is still due.
// A firing left over from an earlier arming, or an earlier call, finds
// the hedge not yet due, or none armed, and does nothing.
func (h *hedging) fired() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner == nil || h.decided || h.due.IsZero() || time.Now().Before(h.due) {
		return
	}
	h.due = time.Time{}
	h.owner.hedge()
}
