package recoil

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
)

// DefaultHedgeDelay is how long an attempt runs before a Hedge with
// neither Delay nor enough latencies for its Quantile races it.
const DefaultHedgeDelay = time.Second

// hedgeWindow is how many recent latencies a Hedge's Quantile is taken
// over, and hedgeSamples how many it needs before it is used.
const (
	hedgeWindow  = 256
	hedgeSamples = 20
)

// A Hedge races an attempt that is slow to answer with another copy of
// it: after the hedge delay, while the attempt is still in flight, the
// call starts a second attempt to the same target, and the first to
// succeed wins; the others are cancelled. Set it as Policy.Hedge.
//
// A hedge is an attempt like any other: it counts against MaxAttempts,
// asks the retry budget and the hop budget as a retry after a timeout does
// (each charges it as it charges a retry; a budget that refuses it refuses
// only the hedge, not the call), takes a limiter slot of its own (a hedge
// never waits for one),
// asks the breaker, and must fit before the deadline. Hedge only what is
// safe to run twice at once — idempotent requests, or requests carrying an
// idempotency key — and only where the slow tail is the dependency's
// variance, not its overload: under overload a hedge is more load, which is
// why the budget pays for it.
//
// A Hedge remembers the latencies of recent successful attempts, for
// Quantile; it is safe for concurrent use. Do not copy it after first use.
type Hedge struct {
	// Delay is how long an attempt runs before it is raced. With Quantile
	// set, it is the delay used until enough latencies are known. Zero
	// means DefaultHedgeDelay.
	Delay time.Duration
	// Quantile, between 0 and 1 (0.95, say), races an attempt once it has
	// run longer than that quantile of the recent successful attempts'
	// latencies (the last 256, once there are 20): the attempts in the slow
	// tail, and only those. Zero means the fixed Delay.
	Quantile float64
	// MaxHedges is the most hedges one call starts; zero means 1.
	MaxHedges int

	mu    sync.Mutex
	rings []*latencies // per target of the policy's Fallback, made on first use; [0] without one
}

// latencies are one target's recent successful latencies, for a Quantile.
type latencies struct {
	ring    [hedgeWindow]time.Duration
	sorted  [hedgeWindow]time.Duration // scratch for computing the quantile
	n       int                        // latencies recorded
	fresh   int                        // recorded since the quantile was computed
	current time.Duration              // the quantile, as last computed
}

func (h *Hedge) maxHedges() int {
	if h.MaxHedges <= 0 {
		return 1
	}
	return h.MaxHedges
}

// After returns the hedge delay now for a policy without a Fallback: the
// Quantile of recent latencies when it is set and known, else Delay (or
// DefaultHedgeDelay).
func (h *Hedge) After() time.Duration { return h.AfterTarget(0) }

// AfterTarget returns the hedge delay now for an attempt to the target at
// index i of the policy's Fallback (0 without one): the Quantile of that
// target's recent latencies when it is set and known — a fallback target
// is often slower or faster than the first, and racing it at the first's
// p95 would hedge all or none of its calls — else Delay (or
// DefaultHedgeDelay).
func (h *Hedge) AfterTarget(i int) time.Duration {
	fixed := h.Delay
	if fixed <= 0 {
		fixed = DefaultHedgeDelay
	}
	if h.Quantile <= 0 || h.Quantile >= 1 || i < 0 {
		return fixed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= len(h.rings) || h.rings[i] == nil {
		return fixed
	}
	l := h.rings[i]
	if l.n < hedgeSamples {
		return fixed
	}
	if l.fresh > 0 && (l.current == 0 || l.fresh >= 8) {
		// Recomputed every few samples: a sort of 256 durations per call
		// would cost more than the hedge saves. Sorted in place in the
		// scratch array, so computing it allocates nothing.
		s := l.sorted[:min(l.n, hedgeWindow)]
		copy(s, l.ring[:len(s)])
		slices.Sort(s)
		l.current = max(s[int(h.Quantile*float64(len(s)-1))], time.Millisecond)
		l.fresh = 0
	}
	return l.current
}

// Observe records the latency of a successful attempt under a policy
// without a Fallback; the engine calls it for every success of a call
// under this Hedge.
func (h *Hedge) Observe(latency time.Duration) { h.ObserveTarget(0, latency) }

// ObserveTarget records the latency of a successful attempt to the target
// at index i of the policy's Fallback (0 without one).
func (h *Hedge) ObserveTarget(i int, latency time.Duration) {
	if h.Quantile <= 0 || i < 0 || i >= maxHedgeTargets {
		return
	}
	h.mu.Lock()
	if i >= len(h.rings) {
		h.rings = append(h.rings, make([]*latencies, i+1-len(h.rings))...)
	}
	l := h.rings[i]
	if l == nil {
		l = new(latencies)
		h.rings[i] = l
	}
	l.ring[l.n%hedgeWindow] = latency
	l.n++
	l.fresh++
	h.mu.Unlock()
}

// maxHedgeTargets bounds the targets a Hedge keeps latencies for.
const maxHedgeTargets = 1 << 10

// flight is one attempt in flight of a call under a Hedge.
type flight struct {
	n  int       // its number
	at time.Time // when it started, under a Hedge with a Quantile; zero otherwise
}

// HedgeAfter returns how long the driver should let the attempts in
// flight run before asking Hedge for another; zero when the call may start
// no hedge (no Hedge, its MaxHedges or the policy's MaxAttempts reached).
func (c *Call) HedgeAfter() time.Duration {
	p, r := c.p, c.route
	if p.Hedge == nil || r == nil || c.done || len(r.flight) == 0 || r.hedges >= p.Hedge.maxHedges() || c.attempts >= p.maxAttempts() {
		return 0
	}
	return p.Hedge.AfterTarget(c.targetIndex())
}

// Hedge asks, once HedgeAfter has passed with attempts still in flight,
// for a hedge: another attempt to the same target. It returns the
// StepAttempt to make and true, or false when the call may not hedge now —
// no Hedge or hedges left, MaxAttempts reached, too close to the deadline,
// no free limiter slot, the breaker or the budgets refusing. A refused
// hedge is not a failure: the attempts in flight go on.
func (c *Call) Hedge(now time.Time) (Step, bool) {
	p, r := c.p, c.route
	if c.HedgeAfter() == 0 {
		return Step{}, false
	}
	now = clock(now)
	if !c.deadline.IsZero() && c.deadline.Sub(now) < p.minAttempt() {
		return Step{}, false
	}
	if p.Limiter != nil && !c.tryAcquire(true) {
		r.refused++
		return Step{}, false
	}
	undo := func() {
		if p.Limiter != nil {
			p.Limiter.Release()
		}
		r.refused++
	}
	if p.Breaker != nil && !p.Breaker.AllowAt(now) {
		undo()
		return Step{}, false
	}
	k := budget.CauseTimeout
	if r.f != nil {
		if why := r.admit(r.cur, now, k, true); why != "" {
			if p.Breaker != nil {
				p.Breaker.RecordAt(now, breaker.Ignored)
			}
			undo()
			return Step{}, false
		}
	}
	if c.budget != nil && !c.retryBudget(now, k) || c.request != nil && !c.request.RetryAt(now, k) {
		if p.Breaker != nil {
			p.Breaker.RecordAt(now, breaker.Ignored)
		}
		if r.f != nil && r.f.Targets[r.cur].Breaker != nil {
			r.f.Targets[r.cur].Breaker.RecordAt(now, breaker.Ignored)
		}
		undo()
		return Step{}, false
	}
	if p.Limiter != nil {
		r.extra++
	}
	c.attempts++
	r.hedges++
	at := now
	if p.Hedge.Quantile <= 0 && !p.timed() {
		at = time.Time{}
	}
	r.flight = append(r.flight, flight{n: c.attempts, at: at})
	if r.f != nil {
		r.reports[r.leg].Attempts++
	}
	return Step{Kind: StepAttempt, Attempt: c.attempts, Deadline: c.cutAt(now)}, true
}

// SuccessOf reports that attempt n succeeded, under a Hedge: the call is
// over, and the attempts still in flight are abandoned — counted for
// nothing in the budgets and breakers, reported to OnAttempt as canceled
// and to the Summary as wasted. The driver cancels them.
func (c *Call) SuccessOf(now time.Time, n int) { c.succeed(now, n) }

// FailOf reports that attempt n failed, under a Hedge. While other
// attempts are in flight a retryable failure decides nothing: it returns
// StepPending, and the call waits for them — and the driver asks Hedge at
// once, as gRFC A6 sends the next hedge on a non-fatal failure without
// waiting out the delay. Otherwise it is Fail: the
// others, if any, are abandoned (a permanent failure ends the call, a
// move to another target leaves them behind).
func (c *Call) FailOf(now time.Time, n int, err error, v Verdict) Step {
	switch wait, k := c.fail(now, n, err, &v); k {
	case StepWait:
		return Step{Kind: StepWait, Wait: wait}
	case StepPending:
		return Step{Kind: StepPending}
	}
	return Step{Kind: StepDone, Err: c.final}
}

// landed takes attempt n, which ended at now in v (nil: a success), out
// of those in flight and gives back a limiter slot; it returns when n
// started, under a Hedge (zero otherwise), and how long it ran when the
// policy times attempts (-1 otherwise, and for a cancelled attempt).
func (c *Call) landed(now time.Time, n int, v *Verdict) (at time.Time, lat time.Duration) {
	lat = -1
	timed := c.p.timed()
	if timed {
		now = clock(now)
	}
	sample := timed && (v == nil || c.p.class(v.Class) != ClassCanceled)
	r := c.route
	if r == nil || r.flight == nil {
		if sample {
			lat = c.took(now)
		}
		if c.held {
			c.held = false
			c.giveBack(now, lat, v)
		}
		c.began = [7]byte{}
		c.inFlight = false
		return at, lat
	}
	for i, f := range r.flight {
		if f.n == n {
			at = f.at
			r.flight = slices.Delete(r.flight, i, i+1)
			break
		}
	}
	if sample {
		if !at.IsZero() {
			lat = max(now.Sub(at), 0)
		} else {
			lat = c.took(now)
		}
	}
	c.inFlight = len(r.flight) > 0
	switch {
	case r.extra > 0:
		r.extra--
		c.giveBack(now, lat, v)
	case c.held:
		c.held = false
		c.giveBack(now, lat, v)
	}
	return at, lat
}

// abandon gives up the attempts still in flight, for why: each counts for
// nothing in the budgets and breakers and reaches OnAttempt as canceled,
// with cause as its error (ErrAbandoned when nil).
func (c *Call) abandon(now time.Time, why string, cause error, r Reason) {
	ro := c.route
	if ro == nil || len(ro.flight) == 0 {
		return
	}
	p := c.p
	if cause == nil {
		cause = ErrAbandoned
	}
	for _, f := range ro.flight {
		if c.budget != nil {
			c.budget.RecordAt(now, budget.Outcome{Attempt: f.n, Result: budget.Ignored})
		}
		if p.Breaker != nil {
			p.Breaker.RecordAt(now, breaker.Ignored)
		}
		ro.record(now, f.n, budget.Ignored, breaker.Ignored, c.after, -1)
		if p.OnAttempt != nil {
			p.OnAttempt(c.context(), AttemptEvent{Attempt: f.n, Err: cause,
				Verdict: Verdict{Class: ClassCanceled, Reason: why}, Reason: r, Target: c.targetName()})
		}
		if r != ReasonCanceled {
			ro.wasted++
		}
	}
	ro.flight = ro.flight[:0]
	for ; ro.extra > 0; ro.extra-- {
		p.Limiter.Release()
	}
	c.release()
	c.inFlight = false
}

// cutAt is when an attempt starting at now must be cut off: the sooner of
// its AttemptTimeout and the call's deadline; zero for never.
func (c *Call) cutAt(now time.Time) time.Time {
	cut := c.deadline
	if c.p.AttemptTimeout > 0 {
		if d := clock(now).Add(c.p.AttemptTimeout); cut.IsZero() || d.Before(cut) {
			cut = d
		}
	}
	return cut
}

// mayHedge reports whether d's call may be hedged (see HedgeGuard).
func mayHedge(d any) bool {
	g, ok := d.(HedgeGuard)
	return !ok || g.MayHedge()
}

// outcome is one attempt's result, as a hedged call's goroutines send it.
type outcome[T any] struct {
	n   int
	v   T
	err error
}

// driveHedged is Drive for a policy with a Hedge: each attempt runs in a
// goroutine of its own, under a context of its own, so that a hedge can
// start while it is in flight, and the first success wins. The losers'
// contexts are cancelled, and driveHedged returns only once every attempt
// it started has returned, so the driver is never used after the call; the
// outcome it returns keeps its context until the driver releases it
// (Holder). The driver's Attempt must be safe to call concurrently; its
// Verdict, Discard and Hold are called from this goroutine only.
func driveHedged[T any, D Driver[T]](ctx context.Context, p *Policy, d D, c *Call, router TargetDriver[T]) (T, error) {
	var (
		none    time.Time
		last    T
		holding bool
		running int
		results = make(chan outcome[T], p.maxAttempts())
		cancels = make(map[int]context.CancelFunc, 2)
		timer   *time.Timer
		jitter  bool // whether the context's jitter source was looked for
	)
	start := func(n int, deadline time.Time) {
		actx, cancel := context.WithCancel(ctx)
		cancels[n] = cancel
		running++
		t := c.Target() // a hedge goes where the attempt it races went
		go func() {
			var o outcome[T]
			if router != nil {
				o.v, o.err = router.AttemptTo(actx, n, t, deadline)
			} else {
				o.v, o.err = d.Attempt(actx, n, deadline)
			}
			o.n = n
			results <- o
		}()
	}
	// settle cancels every attempt still in flight and waits for each to
	// return, discarding its outcome.
	settle := func() {
		for n, cancel := range cancels {
			cancel()
			delete(cancels, n)
		}
		for ; running > 0; running-- {
			o := <-results
			d.Discard(o.v)
		}
		if timer != nil {
			timer.Stop()
		}
	}
	var lastCancel context.CancelFunc // the context of last's attempt
	// release hands an outcome Drive returns its attempt's context: to a
	// Holder, to cancel when the outcome is done with; otherwise cancelled.
	release := func(v T, cancel context.CancelFunc) {
		if h, ok := any(d).(Holder[T]); ok {
			h.Hold(v, cancel)
		} else {
			cancel()
		}
	}
	drop := func() {
		if holding {
			d.Discard(last)
			lastCancel()
			var zero T
			last, lastCancel, holding = zero, nil, false
		}
	}
	keep := func(v T, cancel context.CancelFunc) {
		drop()
		last, lastCancel, holding = v, cancel, true
	}
	// give returns last, handing its context over.
	give := func() T {
		if holding {
			release(last, lastCancel)
		}
		return last
	}
	for {
		k := c.next(none, true)
		if k == stepAcquire {
			var err error
			if k, err = c.admit(ctx); err != nil {
				return give(), err
			}
		}
		if k == StepDone {
			return give(), c.final
		}
		drop() // the last failure goes only once the next attempt does
		start(c.attempts, c.cut)
		var hedge <-chan time.Time
		arm := func() {
			hedge = nil
			if after := c.HedgeAfter(); after > 0 {
				if timer == nil {
					timer = time.NewTimer(after)
				} else {
					timer.Reset(after)
				}
				hedge = timer.C
			}
		}
		arm()
		var (
			wait  time.Duration
			retry bool
		)
		for running > 0 {
			select {
			case o := <-results:
				running--
				cancel := cancels[o.n]
				delete(cancels, o.n)
				v, failure := d.Verdict(p, o.v, o.err)
				if failure == nil {
					c.succeed(none, o.n)
					settle()
					drop()
					release(o.v, cancel)
					return o.v, nil
				}
				keep(o.v, cancel)
				if ctx.Err() != nil {
					settle()
					c.Abort(none, context.Cause(ctx))
					return give(), context.Cause(ctx)
				}
				if !jitter {
					jitter = true
					if r, ok := ctx.Value(jitterKey{}).(backoff.Source); ok {
						c.rnd = r
					}
				}
				var k StepKind
				wait, k = c.fail(none, o.n, failure, &v)
				switch k {
				case StepDone:
					settle()
					return give(), c.final
				case StepWait:
					// The retry or the move to another target goes alone:
					// the Call gave up any hedge still in flight.
					settle()
					retry = true
				case StepPending:
					// As gRFC A6: a failure the others may still outrun
					// sends the next hedge at once, not after the delay.
					if s, ok := c.Hedge(none); ok {
						start(s.Attempt, s.Deadline)
						arm()
					}
				}
			case <-hedge:
				// A refused hedge is not asked for again while these
				// attempts run: the next chance comes with the next attempt.
				hedge = nil
				if s, ok := c.Hedge(none); ok {
					start(s.Attempt, s.Deadline)
					arm()
				}
			case <-ctx.Done():
				settle()
				c.Abort(none, context.Cause(ctx))
				return give(), context.Cause(ctx)
			}
		}
		if !retry {
			return give(), c.final
		}
		if c.Wait(ctx, wait) != nil {
			c.Abort(none, context.Cause(ctx))
			return give(), context.Cause(ctx)
		}
	}
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
