package recoil

import (
	"context"
	"errors"
	"time"

	"github.com/recoil-go/recoil/backoff"
)

// This file is recoil's one retry loop on real time, Drive: a Call (the
// state machine, call.go) stepped by a driver's attempts. Hedged or not,
// with one target or several, a call runs through the loop below: it asks
// the Call for the next attempt, makes it on the caller's goroutine, lands
// its outcome with the Call, and waits as the Call says. Under a Hedge the
// only difference is that hedges run beside the caller's attempt, each in a
// goroutine of its own (race.go), and land their outcomes the same way.

// A Driver makes the attempts of one logical call for Drive, on real time:
// Drive decides when, and the driver knows how. A Driver is used by one
// call at a time.
type Driver[T any] interface {
	// Attempt makes attempt n (1 is the first) under ctx, the caller's
	// (under a Hedge, a child of it that Drive cancels when another
	// attempt decides the call). deadline, if not zero, is when the
	// attempt must be cut off — the sooner of the policy's AttemptTimeout
	// and the call's deadline (the caller's, or the policy's Timeout) —
	// reporting the cut as a timeout. Drive derives no deadline: cutting
	// the attempt off is the driver's. Under a Hedge, attempts run at
	// once: Attempt must then be safe to call concurrently.
	Attempt(ctx context.Context, n int, deadline time.Time) (T, error)
	// Verdict reads an attempt's outcome under p, the policy Drive was
	// given: a nil error for a success; otherwise the failure's final
	// verdict and the error to record it with. The verdict is
	// p.Verdict(failure, own) — the policy's Classify first, then the
	// driver's own rules (own; the zero Verdict for none), then the
	// built-in ones — and then the driver's guard: a driver that cannot
	// repeat the attempt (a request body it cannot replay) makes a
	// retryable verdict permanent, saying why. Drive calls Verdict,
	// Discard and Hold for one outcome at a time, under the call's lock.
	Verdict(p *Policy, v T, err error) (Verdict, error)
	// Discard releases an outcome nobody will see: a failure Drive retried.
	Discard(v T)
}

// A Reporter is a Driver that wants the call's Summary when it ends, with
// the caller's context, besides the policy's Observe: the HTTP Transport
// adds the method, host and status to it.
type Reporter interface {
	Report(ctx context.Context, s Summary)
}

// A TargetDriver is a Driver that can send an attempt to any of a
// Fallback's targets: under a policy with a Fallback, Drive calls
// AttemptTo, with the attempt's target, in place of Attempt. A driver that
// is not one cannot run such a call: it stops with ErrNoTarget before any
// attempt.
type TargetDriver[T any] interface {
	AttemptTo(ctx context.Context, n int, t *Target, deadline time.Time) (T, error)
}

// A HedgeGuard is a Driver that says whether its call may be hedged: run
// twice, at once. Under a policy with a Hedge, Drive hedges a call only if
// its driver is not a HedgeGuard or MayHedge reports true; otherwise it
// runs the call one attempt at a time. The HTTP Transport is one: it
// hedges only a request that may be repeated (an idempotent method, or an
// idempotency key) and whose body can be sent again.
type HedgeGuard interface {
	MayHedge() bool
}

// A RequestBudgeter is a Driver whose call spends its retries from a
// budget of the request's own as well as from the policy's: a driver of
// the hop protocol returns the request's hop.Account. Drive gives it to
// the Call (SetRequestBudget) before the first attempt; nil means none.
type RequestBudgeter interface {
	RequestBudget() Budget
}

// A Holder is a Driver whose outcome outlives its attempt's context: an
// HTTP response, whose body the caller reads after the call. Under a
// Hedge each attempt runs under a context of its own, which Drive cancels
// to stop a loser; the context of the outcome Drive returns is handed to
// Hold instead, with the function that cancels it, for the driver to call
// once the outcome is done with. For a driver that is not a Holder, Drive
// cancels it as it returns.
type Holder[T any] interface {
	Hold(v T, release context.CancelFunc)
}

// Drive runs one logical call under p (nil means Default) on real time:
// attempts through d until one succeeds or the policy says to stop. It
// returns the successful outcome with a nil error; when the call gives up,
// the last attempt's outcome (undiscarded, the zero T if none was made)
// with the *Error; and when ctx is done, the outcome in hand with
// context.Cause(ctx).
//
// Each attempt runs on the caller's goroutine. Under a Hedge (and a driver
// that may hedge: HedgeGuard), each hedge runs in a goroutine of its own
// beside it, every attempt under a context of its own, and Drive returns
// only once every attempt it started has returned, so the driver is never
// used after the call.
//
// ctx bounds the call; the policy's Timeout bounds it further. Drive
// derives no deadline for it: the Timeout is the call's deadline, which
// cuts off each attempt (the deadline Attempt is given), lets no wait
// start that cannot finish, and bounds a wait in the limiter's queue. A
// driver that is a RequestBudgeter gives the call its request budget.
func Drive[T any, D Driver[T]](ctx context.Context, p *Policy, d D) (T, error) {
	var first T
	return drive(ctx, p, d, first, nil)
}

// loop is one call's run on real time: the Call, its driver, and the
// outcomes kept for the caller.
type loop[T any, D Driver[T]] struct {
	d      D
	ctx    context.Context
	router TargetDriver[T] // under a Fallback, a driver not the package's own
	routed bool            // the driver is one of the package's own target drivers (loop.attempt)
	own    bool            // the driver is the package's own (ownDriver)
	race   *race[T, D]     // under a Hedge; nil otherwise

	last    T                  // the last failed outcome, kept until the next attempt goes
	lastEnd context.CancelFunc // its attempt's context, under a Hedge
	holding bool               // last is an outcome the driver has not discarded
	won     T                  // the successful outcome
	wonEnd  context.CancelFunc // its attempt's context, under a Hedge
}

// outcome is one attempt's result.
type outcome[T any] struct {
	n   int
	v   T
	err error
	end context.CancelFunc // its attempt's context, under a Hedge; nil otherwise
}

// Steps land returns besides the Call's: the call succeeded, or its
// caller gave up.
const (
	stepWon StepKind = iota + 100
	stepLeft
)

// drive is Drive after an optional first attempt already made (Do's and
// Get's fast path, and DoTarget's and GetTarget's to the first target):
// first and firstErr are its outcome when firstErr is non-nil.
//
// The Call lives on the stack, apart from the loop (whose outcomes go where
// the driver's methods take them), unless attempts run beside each other:
// then it lives in the race, on the heap, with the loop they share. The
// route a move needs is part of the Call. (No defer: a function with as
// many returns as run has cannot open-code one, and a state a panicking
// attempt leaves behind is only not reused.)
func drive[T any, D Driver[T]](ctx context.Context, p *Policy, d D, first T, firstErr error) (T, error) {
	if p == nil {
		p = &defaultPolicy
	}
	if p.Hedge != nil && firstErr == nil && mayHedge(d) {
		r := newRace[T, D]()
		r.d, r.ctx = d, ctx
		v, err := run(ctx, p, &r.loop, r.c, first, firstErr)
		r.free()
		return v, err
	}
	var (
		s driven
		l loop[T, D]
	)
	s.c.beside = true
	l.d, l.ctx = d, ctx // not a literal copied in (see permit.reset)
	return run(ctx, p, &l, &s.c, first, firstErr)
}

// run is the loop: the Call c's attempts through l, until c is done.
func run[T any, D Driver[T]](ctx context.Context, p *Policy, l *loop[T, D], c *Call, first T, firstErr error) (T, error) {
	var none time.Time // the zero time: "now, if anyone needs it"
	l.own, l.routed = ownDriver[T](l.d)
	if !l.own {
		if r, ok := any(l.d).(Reporter); ok {
			c.reporter = r
		}
	}
	deadline, _ := ctx.Deadline()
	c.begin(p, none, p.callDeadline(none, deadline))
	c.ctx, c.jitters = ctx, true
	if !l.own {
		if b, ok := any(l.d).(RequestBudgeter); ok {
			c.request = b.RequestBudget()
		}
	}
	if p.Fallback != nil {
		if !l.routed {
			var ok bool
			if l.router, ok = any(l.d).(TargetDriver[T]); !ok {
				c.end(none, ReasonNoTarget, 0, errNoRouter)
				return l.give(c), c.final
			}
		}
		c.pinned = firstErr != nil // it went to the first target
	}
	for {
		k := c.next(none, true)
		if k == stepAcquire {
			var err error
			if k, err = c.waitSlot(ctx); err != nil {
				return l.give(c), err
			}
		}
		if k == StepDone {
			return l.give(c), c.final
		}
		l.drop() // the last failure goes only once the next attempt does
		var wait time.Duration
		switch {
		case firstErr != nil:
			k, wait = l.land(c, outcome[T]{n: c.attempts, v: first, err: firstErr})
			firstErr = nil
		case l.race != nil:
			k, wait = l.race.run(c.attempts, c.cut)
		default:
			v, err := l.attempt(ctx, c.attempts, c.Target(), c.cut)
			k, wait = l.land(c, outcome[T]{n: c.attempts, v: v, err: err})
		}
		switch k {
		case stepWon:
			return l.give(c), nil
		case stepLeft:
			c.Abort(none, context.Cause(ctx))
			return l.give(c), context.Cause(ctx)
		case StepDone:
			return l.give(c), c.final
		}
		if wait > 0 && c.Wait(ctx, wait) != nil { // a move waits nothing
			c.Abort(none, context.Cause(ctx))
			return l.give(c), context.Cause(ctx)
		}
	}
}

// errNoRouter is the error of a call under a Fallback whose driver cannot
// route attempts.
var errNoRouter = errors.New("recoil: the policy has a Fallback but the driver cannot send an attempt to a target (use DoTarget, GetTarget, recoilhttp.Transport or the recoilgrpc interceptors)")

// attempt makes attempt n under ctx, to t under a Fallback. The
// package's own target drivers (routed) call their op at once when the
// attempt has no deadline, as their AttemptTo would.
func (l *loop[T, D]) attempt(ctx context.Context, n int, t *Target, cut time.Time) (v T, err error) {
	switch {
	case l.router != nil:
		return l.router.AttemptTo(ctx, n, t, cut)
	case !l.routed:
		return l.d.Attempt(ctx, n, cut)
	}
	switch d := any(l.d).(type) {
	case targetDriver[T]:
		if cut.IsZero() {
			return d.op(ctx, t)
		}
		return d.AttemptTo(ctx, n, t, cut)
	case errTargetDriver:
		// T is struct{}: v is its one value.
		if cut.IsZero() {
			return v, d.op(ctx, t)
		}
		_, err = d.AttemptTo(ctx, n, t, cut)
		return v, err
	}
	panic("recoil: a routed driver that is not the package's own")
}

// The package's own drivers (Do's, Get's, DoTarget's and GetTarget's) are
// told apart by their types, compared in a type switch: asking a driver
// whether it implements an interface looks its method table up on every
// call, which a call that moves to the next target should not pay.

// ownDriver reports whether d is one of the package's own drivers, none
// of which reports its Summary or has a request budget, and whether it is
// one of the target drivers (DoTarget's, GetTarget's), whose attempts
// attempt makes.
func ownDriver[T any, D Driver[T]](d D) (own, router bool) {
	switch any(d).(type) {
	case errDriver, funcDriver[T]:
		return true, false
	case errTargetDriver, targetDriver[T]:
		return true, true
	}
	return false, false
}

// land reads attempt o.n's outcome with the driver and reports it to the
// Call: stepWon after a success (kept in won), stepLeft when the caller
// has gone, else what the Call says after the failure — StepPending while
// hedges may still answer, StepWait with the wait, or StepDone. Under a
// Hedge it runs under the race's lock, on whichever goroutine made the
// attempt.
func (l *loop[T, D]) land(c *Call, o outcome[T]) (StepKind, time.Duration) {
	var (
		none    time.Time
		v       Verdict
		failure error
	)
	if l.own {
		// The package's own drivers classify the op's error by the
		// policy alone (opVerdict): here, into v, not through a copy.
		if failure = o.err; failure != nil {
			if p := c.p; p.Classify == nil {
				classify(&v, failure, p.unknown()) // Policy.verdict with no Classify
			} else {
				p.verdict(&v, failure, nil)
			}
		}
	} else {
		v, failure = l.d.Verdict(c.p, o.v, o.err)
	}
	if failure == nil {
		c.succeed(none, o.n)
		l.drop()
		l.won, l.wonEnd = o.v, o.end
		return stepWon, 0
	}
	l.drop()
	l.last, l.lastEnd, l.holding = o.v, o.end, true
	if l.ctx.Err() != nil { // the caller gave up: no retry, whatever happened
		return stepLeft, 0
	}
	wait, k := c.fail(none, o.n, failure, &v)
	return k, wait
}

// drop discards the last failed outcome, if one is held. Small enough to
// inline: most calls hold none.
func (l *loop[T, D]) drop() {
	if l.holding {
		l.discard()
	}
}

// discard is drop for an outcome held. The package's own drivers hold
// nothing to release.
func (l *loop[T, D]) discard() {
	if !l.own {
		l.d.Discard(l.last)
	}
	if l.lastEnd != nil {
		l.lastEnd()
	}
	var zero T
	l.last, l.lastEnd, l.holding = zero, nil, false
}

// give returns the outcome the call ends with — the success, or else the
// last failure kept — handing its attempt's context, if it has one of its
// own, to the driver (Holder) or cancelling it.
func (l *loop[T, D]) give(c *Call) T {
	v, end := l.last, l.lastEnd
	if c.done && c.final == nil {
		v, end = l.won, l.wonEnd
	}
	if end != nil {
		if h, ok := any(l.d).(Holder[T]); ok {
			h.Hold(v, end)
		} else {
			end()
		}
	}
	return v
}

// mayHedge reports whether d's call may be hedged (see HedgeGuard).
func mayHedge(d any) bool {
	g, ok := d.(HedgeGuard)
	return !ok || g.MayHedge()
}

// waitSlot waits for the limiter slot Next asked for and returns the step
// after it; a non-nil error ends the call, already recorded: the caller's
// cause when ctx ended the wait, else the *Error of a full limiter or of
// the policy's Timeout running out in the queue.
func (c *Call) waitSlot(ctx context.Context) (StepKind, error) {
	var none time.Time
	late, err := c.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			c.Abort(none, context.Cause(ctx))
			return StepDone, context.Cause(ctx)
		}
		r := ReasonLimit
		if late { // the policy's Timeout ran out in the queue
			r = ReasonDeadline
		}
		c.end(none, r, 0, err)
		return StepDone, c.final
	}
	c.cur.slot = true
	return c.next(none, true), nil
}

// acquire waits for a limiter slot under ctx and, when the call's deadline
// comes sooner than ctx's, until that deadline at the latest; late reports
// that the deadline ended the wait. The queue is the one place Drive cuts
// off with a context of its own, on the path where every slot is taken.
func (c *Call) acquire(ctx context.Context) (late bool, err error) {
	if !sooner(ctx, c.deadline) {
		return false, c.acquireSlot(ctx)
	}
	qctx, cancel := context.WithDeadlineCause(ctx, c.deadline, ErrDeadline)
	defer cancel()
	err = c.acquireSlot(qctx)
	return err != nil && ctx.Err() == nil && qctx.Err() != nil, err
}

// acquireSlot waits for a limiter slot for the next attempt under ctx.
func (c *Call) acquireSlot(ctx context.Context) error {
	if l, ok := c.p.Limiter.(PriorityLimiter); ok {
		return l.AcquireAs(ctx, c.priority(), c.attempts > 0)
	}
	return c.p.Limiter.Acquire(ctx)
}

// jitterKey is the context key of WithJitter's source.
type jitterKey struct{}

// jitterOf returns the jitter source ctx carries (WithJitter), or else r.
func jitterOf(ctx context.Context, r backoff.Source) backoff.Source {
	if s, ok := ctx.Value(jitterKey{}).(backoff.Source); ok {
		return s
	}
	return r
}

// WithJitter returns a context whose calls draw their waits' jitter from r
// in place of their policy's Rand: every call Drive runs under it (Do, the
// HTTP Transport, the gRPC interceptors). It gives one caller a stream of
// its own while the policy — its budget, breaker and limiter — stays shared:
// a load driver's callers each drawing from a seeded stream of their own
// wait the same waits whatever order their attempts fail in, so a run can
// be repeated, or simulated with the same draws. r is drawn from by the
// goroutine that makes the call; share one context between goroutines only
// with a source that is safe for concurrent use. A nil r leaves the
// policy's Rand in use.
func WithJitter(ctx context.Context, r backoff.Source) context.Context {
	if r == nil {
		return ctx
	}
	return context.WithValue(ctx, jitterKey{}, r)
}
