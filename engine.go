package recoil

import (
	"context"
	"errors"
	"time"

	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
)

// This file is recoil's one retry loop. Everything that sequences attempts
// lives here: admission, the limiter slot (held for one attempt, never
// across a wait), the per-attempt and whole-call deadlines, classification,
// the policy's and the request's budgets, the breaker, waits, and the
// observers. Decide (policy.go) is the pure decision the loop consults.
//
// The loop has two forms over one state machine, Call:
//
//   - Drive runs it on real time for any driver that can block: Do and Get,
//     the HTTP Transport, the gRPC interceptors, the load driver. A driver
//     supplies only how to make one attempt and how to read its outcome
//     (Driver). The boundary runs one way: drivers call into the engine,
//     which imports none of them.
//   - A driver on virtual time (the simulator) cannot block, so it steps
//     the Call itself: Next says what to do, the driver does it on its own
//     clock and reports back with Success or Fail, which say what to do
//     next. It decides nothing.

// StepKind is what a Call asks its driver to do next.
type StepKind uint8

const (
	// StepAttempt: make attempt Step.Attempt, cutting it off at
	// Step.Deadline (zero: no deadline), and report it with Success or Fail.
	StepAttempt StepKind = iota + 1
	// StepWait: wait Step.Wait, then ask Next for the next step.
	StepWait
	// StepDone: the call is over; Step.Err is nil after a success, a *Error
	// when it gave up, or the cause its caller abandoned it with.
	StepDone
	// StepPending: an attempt failed while others of the call (hedges) are
	// still in flight; wait for one of them to report.
	StepPending
	// stepAcquire: every limiter slot is held; a driver that can block
	// waits for one (Drive), then asks again.
	stepAcquire
)

// Step is a Call's instruction to its driver.
type Step struct {
	// Kind is what to do.
	Kind StepKind
	// Attempt is the number of the attempt to make (StepAttempt); 1 is the first.
	Attempt int
	// Deadline is when the attempt must be cut off (StepAttempt): the
	// sooner of its AttemptTimeout and the call's deadline; zero for none.
	Deadline time.Time
	// Wait is how long to wait before the next attempt (StepWait).
	Wait time.Duration
	// Err is how the call ended (StepDone).
	Err error
}

// Call is one logical call's retry state: the loop as a state machine.
// Begin starts it; then Next says what to do, and each attempt's outcome is
// reported with Success or Fail, whose Step says what to do next: wait and
// ask Next again, or stop. Abort ends a call its caller abandoned. A zero
// now means "the current time" and lets the healthy path skip the clock; the
// Call reads the clock itself only where a deadline or an observer needs it.
//
// Drive runs a Call on real time; drive one yourself only on a clock of your
// own (a simulation). A Call is a value with no goroutines and no
// allocations of its own. It is not safe for concurrent use; the zero Call
// is not usable.
type Call struct {
	p        *Policy
	ctx      context.Context // the caller's, for observers; nil means Background
	budget   Budget
	request  Budget         // the request's own budget (the hop protocol's); nil if none
	rnd      backoff.Source // the call's own jitter source; nil means the policy's
	deadline time.Time
	start    time.Time
	attempts int
	waited   time.Duration
	prev     time.Duration
	refused  time.Duration // the wait the call stopped over, if any
	after    budget.Cause
	began    [7]byte // when the attempt in flight began, if it is timed (see beginAttempt); in what was padding
	// verdicts holds the last failure's verdict, verdicts[last], and room
	// for the next attempt's, which Drive's driver writes in place: a
	// Verdict is too large to live in registers, and each copy of one
	// just written stalls the processor on the store.
	verdicts [2]Verdict
	err      error
	admitted bool // the budget admitted the call
	held     bool // a limiter slot is held for the attempt
	inFlight bool // an attempt was started and not yet reported
	done     bool
	reason   Reason      // why the call ended, once done
	last     uint8       // beside the flags, where a field of its own would pad to a word
	tgt      uint16      // 1 + the target of a first attempt sent with no route (Fallback's common path); 0 for none
	final    error       // what the call ended with, once done
	route    *route      // the call's targets and attempts in flight, under a Fallback or a Hedge
	cut      time.Time   // the attempt under way must be cut off then; zero for never
	timer    *time.Timer // Wait's, made on the first wait that needs one
	reporter Reporter    // Drive's driver, when it wants the Summary
}

// Begin starts a logical call under p (nil means Default) that must finish
// by deadline (zero means none) and, when the policy sets Timeout, within
// Timeout of now.
func (p *Policy) Begin(now, deadline time.Time) Call {
	if p == nil {
		p = &defaultPolicy
	}
	if p.Timeout > 0 {
		now = clock(now)
	}
	var c Call
	c.begin(p, now, p.callDeadline(now, deadline))
	return c
}

// callDeadline is when a call that began at now (zero: read the clock if
// it is needed) under a caller's deadline (zero: none) must be over: the
// sooner of that and the policy's Timeout.
func (p *Policy) callDeadline(now, deadline time.Time) time.Time {
	if p.Timeout > 0 {
		if d := clock(now).Add(p.Timeout); deadline.IsZero() || d.Before(deadline) {
			return d
		}
	}
	return deadline
}

// begin initialises a zero c in place, with deadline already final. Setting
// fields one by one, rather than assigning a composite literal, saves
// copying the whole struct.
func (c *Call) begin(p *Policy, now, deadline time.Time) {
	c.p, c.budget, c.deadline = p, p.budget(), deadline
	if p.Observe != nil || c.reporter != nil {
		c.start = clock(now)
	}
}

// SetJitter gives the call a jitter source of its own, drawn from in place
// of the policy's Rand for every wait it decides from now on; nil means
// the policy's again. Drive sets the source the context carries
// (WithJitter), if any. Only the call's own goroutine draws from it.
func (c *Call) SetJitter(r backoff.Source) { c.rnd = r }

// SetRequestBudget gives the call a budget of its own, asked after the
// policy's before every retry: the hop protocol's retry budget for the call
// tree (a hop.Account). Set it before the first attempt; nil means none.
// Drive sets the one its driver returns, if it is a RequestBudgeter.
func (c *Call) SetRequestBudget(b Budget) { c.request = b }

// Deadline returns when the call must be over: the sooner of the caller's
// deadline and the policy's Timeout; zero for none.
func (c *Call) Deadline() time.Time { return c.deadline }

// Target returns the target of the attempt in flight, or of the last one
// made, under a policy with a Fallback; nil otherwise, and before the
// first attempt. A driver on a clock of its own sends the attempt Next
// starts to it.
func (c *Call) Target() *Target {
	if c.tgt != 0 {
		return &c.p.Fallback.Targets[c.tgt-1]
	}
	return c.route.target()
}

// Attempts returns the number of attempts started so far.
func (c *Call) Attempts() int { return c.attempts }

// Waited returns the total of the waits decided so far.
func (c *Call) Waited() time.Duration { return c.waited }

// Summary reports the call so far, or as it ended. now (zero: the current
// time) dates Elapsed, which is zero unless Observe was set when the call
// began.
func (c *Call) Summary(now time.Time) Summary {
	s := Summary{Attempts: c.attempts, Reason: c.reason, Waited: c.waited, RefusedWait: c.refused,
		Verdict: c.verdicts[c.last], LastErr: c.err, Err: c.final}
	if c.route != nil {
		s.Targets, s.Hedges, s.Wasted, s.RefusedHedges = c.route.reports, c.route.hedges, c.route.wasted, c.route.refused
	} else if c.tgt != 0 {
		s.Targets = []TargetReport{{Target: c.p.Fallback.name(int(c.tgt) - 1), Attempts: 1}}
	}
	if !c.start.IsZero() {
		s.Elapsed = clock(now).Sub(c.start)
	}
	return s
}

// Next returns what to do next: StepAttempt, or StepDone when the call is
// over or may not go on. Before an attempt it stops the call if its
// deadline has passed; before the first, it asks the budget to admit the
// call; then it takes a limiter slot (on a driver that cannot block, a full
// limiter sheds the attempt: ReasonLimit) and asks the breaker.
func (c *Call) Next(now time.Time) Step {
	if c.next(now, false) == StepAttempt {
		return Step{Kind: StepAttempt, Attempt: c.attempts, Deadline: c.cut}
	}
	return Step{Kind: StepDone, Err: c.final}
}

// next is Next for both kinds of driver: block asks for stepAcquire, not a
// shed, when every limiter slot is held. It returns only the kind of step,
// leaving the attempt's deadline in c.cut and the call's end in c.final:
// a Step returned through every attempt is a large value copied for
// nothing.
func (c *Call) next(now time.Time, block bool) StepKind {
	if c.done {
		return StepDone
	}
	p := c.p
	if c.attempts > 0 && !c.deadline.IsZero() {
		if now = clock(now); !now.Before(c.deadline) {
			return c.end(now, ReasonDeadline, 0)
		}
	}
	if !c.admitted {
		if c.budget != nil && !c.admitBudget(now) {
			return c.end(now, ReasonBudget, 0)
		}
		c.admitted = true
	}
	if p.Limiter != nil && !c.held {
		if !c.tryAcquire(c.attempts > 0) {
			if block {
				return stepAcquire
			}
			return c.end(now, ReasonLimit, 0)
		}
		c.held = true
	}
	if p.Breaker != nil && !p.Breaker.AllowAt(now) {
		return c.end(now, ReasonCircuitOpen, 0)
	}
	if c.route == nil && c.tgt == 0 && c.attempts == 0 && p.Hedge == nil && p.Fallback != nil && p.Fallback.quick(now) {
		// The first target is in use: the first attempt goes there with
		// no route made, which a call that succeeds at once never needs.
		c.tgt = 1
	} else if c.route == nil && (p.Fallback != nil || p.Hedge != nil) {
		c.route = routeFor(p.Fallback)
		if c.tgt != 0 {
			c.route.resume()
			c.tgt = 0
		}
	}
	if c.route != nil && p.Fallback != nil {
		if ok, r := c.route.choose(now, c.after); !ok {
			if p.Breaker != nil {
				p.Breaker.RecordAt(now, breaker.Ignored) // its admission goes unused
			}
			return c.end(now, r, 0)
		}
	}
	c.attempts++
	c.inFlight = true
	timed := p.timed()
	if timed {
		now = clock(now)
		c.beginAttempt(now)
	}
	if p.Hedge != nil {
		var at time.Time // read only for a Quantile or a latency-aware limiter or breaker
		if p.Hedge.Quantile > 0 || timed {
			now = clock(now)
			at = now
		}
		c.route.flight = append(c.route.flight, flight{n: c.attempts, at: at})
	}
	c.cut = c.cutAt(now)
	return StepAttempt
}

// Success reports that the attempt Next started succeeded; the call is over.
func (c *Call) Success(now time.Time) { c.succeed(now, c.attempts) }

// succeed is Success for attempt n.
func (c *Call) succeed(now time.Time, n int) {
	p := c.p
	at, lat := c.landed(now, n, nil)
	if c.budget != nil {
		c.budget.RecordAt(now, budget.Outcome{Attempt: n, Result: budget.Success, After: c.after})
	}
	if p.Breaker != nil {
		recordOutcome(p.Breaker, now, breaker.Success, lat)
	}
	if c.route != nil {
		c.route.record(now, n, budget.Success, breaker.Success, c.after, lat)
		if !at.IsZero() {
			p.Hedge.ObserveTarget(c.targetIndex(), clock(now).Sub(at))
		}
	} else if c.tgt != 0 {
		p.Fallback.record(int(c.tgt)-1, now, n, budget.Success, breaker.Success, c.after, lat)
	}
	if p.OnAttempt != nil {
		p.OnAttempt(c.context(), AttemptEvent{Attempt: n, Target: c.targetName()})
	}
	c.abandon(now, "another attempt answered first", nil, ReasonNone)
	c.finish(now, ReasonNone, nil)
}

// Fail reports that the attempt Next started failed with err, classified
// as v (see Policy.Verdict). It returns StepWait with the wait before the
// next attempt, or StepDone with the *Error the call gives up with: at once
// when the call's deadline has passed, otherwise as Decide says and, for a
// retry Decide allows, as the budgets say — the policy's and then the
// request's are asked, and each charged, here and nowhere else.
func (c *Call) Fail(now time.Time, err error, v Verdict) Step {
	return c.FailOf(now, c.attempts, err, v)
}

// fail is FailOf with the verdict by reference, and the step as the wait
// and its kind: StepWait to retry after it, StepPending, or StepDone. A
// verdict already in the Call's spare slot (Drive's) is not copied.
func (c *Call) fail(now time.Time, n int, err error, v *Verdict) (time.Duration, StepKind) {
	p := c.p
	if c.tgt != 0 {
		// The first attempt went out with no route: make it now.
		c.route = routeFor(p.Fallback)
		c.route.resume()
		c.tgt = 0
	}
	_, lat := c.landed(now, n, v)
	if spare := &c.verdicts[c.last^1]; v != spare {
		*spare = *v
	}
	c.last ^= 1
	c.err, v = err, &c.verdicts[c.last]
	if c.budget != nil {
		c.budget.RecordAt(now, budget.Outcome{Attempt: n, Result: budgetResult(v.Class), After: c.after})
	}
	if p.Breaker != nil {
		recordOutcome(p.Breaker, now, breakerOutcome(v.Class), lat)
	}
	behind := false // hedges in flight are left behind, whatever is decided
	if c.route != nil {
		c.route.record(now, n, budgetResult(v.Class), breakerOutcome(v.Class), c.after, lat)
		if c.inFlight {
			// Hedges are in flight: a retryable failure waits for them;
			// any other decision leaves them behind.
			if p.class(v.Class).Retryable() && (c.deadline.IsZero() || clock(now).Before(c.deadline)) {
				if p.OnAttempt != nil {
					p.OnAttempt(c.context(), AttemptEvent{Attempt: n, Err: err, Verdict: *v, Target: c.targetName()})
				}
				return 0, StepPending
			}
			behind = true
		}
	}
	var (
		d       Decision
		decided bool   // the Fallback's rule decided
		left    string // why the call leaves its target, when it does
	)
	if !c.deadline.IsZero() {
		// The deadline rule needs the time; nothing else here does.
		if now = clock(now); !now.Before(c.deadline) {
			d.Reason = ReasonDeadline
		}
	}
	if d.Reason == ReasonNone {
		if c.route != nil && c.route.f != nil {
			if d, decided = c.leave(now, v); d.Retry {
				left = c.route.reports[c.route.leg].Left
			}
		}
		if !decided {
			d = p.decide(c.attempts, v, now, c.deadline, c.prev, c.rnd)
			if d.Retry && !c.charge(now, v) {
				d = Decision{Reason: ReasonBudget}
			}
		}
	}
	if p.OnAttempt != nil {
		p.OnAttempt(c.context(), AttemptEvent{Attempt: n, Err: err, Verdict: *v, Retry: d.Retry, Wait: d.Wait, Reason: d.Reason,
			Target: c.targetName(), Left: left})
	}
	if behind {
		c.abandon(now, "another attempt decided the call", nil, ReasonNone)
	}
	if !d.Retry {
		c.end(now, d.Reason, d.Wait)
		return 0, StepDone
	}
	if c.route != nil && c.route.f != nil && left == "" {
		c.route.stay = true // the retry goes to the same target
	}
	c.prev = d.Wait
	c.waited += d.Wait
	c.after = cause(v.Timeout, v.Class)
	return d.Wait, StepWait
}

// leave applies the Fallback's rule to the failure v of the attempt just
// made: it cools the target as the rule says and, when the rule moves the
// call and a target remains, decides the move — at once, but like any
// retry within MaxAttempts, the deadline and the budgets — and returns
// reports whether it decided. A failure it does not decide is decided as
// without a Fallback.
func (c *Call) leave(now time.Time, v *Verdict) (d Decision, decided bool) {
	r, p := c.route, c.p
	if p.class(v.Class) == ClassCanceled {
		return d, false
	}
	lv := r.f.rule(v)
	if lv.Cool != 0 {
		r.f.cool(r.cur, now, lv.Cool)
	}
	if !lv.Move || !r.canMove(lv.Longer) {
		return d, false
	}
	switch {
	case c.attempts >= p.maxAttempts():
		d.Reason = ReasonAttempts
	case !c.deadline.IsZero() && c.deadline.Sub(now) < p.minAttempt():
		d.Reason = ReasonDeadline
	case !c.charge(now, v):
		d.Reason = ReasonBudget
	default:
		d.Retry = true
		r.leave(&lv)
	}
	// A refused move stops the call where it is, for the reason it was
	// refused.
	return d, true
}

// targetIndex is the index in the policy's Fallback of the target the
// call's attempts now go to; 0 without a Fallback.
func (c *Call) targetIndex() int {
	if r := c.route; r != nil && r.f != nil && r.cur >= 0 {
		return r.cur
	}
	if c.tgt != 0 {
		return int(c.tgt) - 1
	}
	return 0
}

// targetName is the name of the attempt's target, "" without a Fallback.
func (c *Call) targetName() string {
	if c.tgt != 0 {
		return c.p.Fallback.name(int(c.tgt) - 1)
	}
	if c.route == nil || c.route.f == nil || c.route.cur < 0 {
		return ""
	}
	return c.route.reports[c.route.leg].Target
}

// charge asks the policy's budget and then the request's for a retry
// after the failure v; each charges the retry only if it allows it. A
// policy's CostBudget is charged the cost the call's context carries.
func (c *Call) charge(now time.Time, v *Verdict) bool {
	k := cause(v.Timeout, c.p.class(v.Class))
	if c.budget != nil && !c.retryBudget(now, k) {
		return false
	}
	return c.request == nil || c.request.RetryAt(now, k)
}

// retryBudget asks the policy's budget for a retry or a hedge priced at k:
// by the cost the call's context carries when the budget is a CostBudget.
func (c *Call) retryBudget(now time.Time, k budget.Cause) bool {
	if cb, n := c.cost(); cb != nil {
		return cb.RetryNAt(now, k, n)
	}
	return c.budget.RetryAt(now, k)
}

// admitBudget asks the policy's budget to admit the call's first attempt:
// by the cost the call's context carries when the budget is a CostBudget.
func (c *Call) admitBudget(now time.Time) bool {
	if cb, n := c.cost(); cb != nil {
		return cb.AdmitNAt(now, n)
	}
	return c.budget.AdmitAt(now)
}

// cost returns the policy's budget as a CostBudget and the cost of an
// attempt when both exist: the budget is one and the call's context
// carries a cost (WithCost). The context is read only for a CostBudget.
func (c *Call) cost() (CostBudget, int64) {
	cb, ok := c.budget.(CostBudget)
	if !ok || c.ctx == nil {
		return nil, 0
	}
	n, ok := CostFrom(c.ctx)
	if !ok {
		return nil, 0
	}
	return cb, n
}

// Abort ends a call its caller abandoned (its context was cancelled) with
// cause, reporting it to Observe. An attempt started and not yet reported
// counts for nothing in the budget and breaker (it frees a half-open probe)
// and reaches OnAttempt as canceled; one already reported is not reported
// again.
func (c *Call) Abort(now time.Time, cause error) {
	if c.done {
		return
	}
	p := c.p
	if c.route != nil && c.route.flight != nil {
		c.abandon(now, "the caller gave up", cause, ReasonCanceled)
	}
	c.release()
	if c.inFlight {
		c.inFlight = false
		if c.budget != nil {
			c.budget.RecordAt(now, budget.Outcome{Attempt: c.attempts, Result: budget.Ignored})
		}
		if p.Breaker != nil {
			p.Breaker.RecordAt(now, breaker.Ignored)
		}
		if c.route != nil {
			c.route.record(now, c.attempts, budget.Ignored, breaker.Ignored, c.after, -1)
		} else if c.tgt != 0 {
			p.Fallback.record(int(c.tgt)-1, now, c.attempts, budget.Ignored, breaker.Ignored, c.after, -1)
		}
		if p.OnAttempt != nil {
			// The attempt was sent: an observer counting attempts counts
			// it, as canceled.
			p.OnAttempt(c.context(), AttemptEvent{Attempt: c.attempts, Err: cause,
				Verdict: Verdict{Class: ClassCanceled, Reason: "the caller gave up"}, Reason: ReasonCanceled, Target: c.targetName()})
		}
	}
	c.finish(now, ReasonCanceled, cause)
}

// Wait sleeps d on real time, for a driver of the call that runs on real
// time. It returns nil after d, or ctx's error as soon as ctx is done; a
// wait of zero or less returns at once and starts no timer. The timer is
// made once per call and reused.
func (c *Call) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-c.timer.C:
		return nil
	case <-ctx.Done():
		c.timer.Stop()
		return ctx.Err()
	}
}

// stop ends the call for reason r after err (the limiter's, say), and
// returns its *Error.
func (c *Call) stop(now time.Time, r Reason, err error) error {
	if c.done {
		return c.final
	}
	if err != nil {
		c.err = err
	}
	c.end(now, r, 0)
	return c.final
}

// end gives the call up for reason r: its *Error becomes c.final.
func (c *Call) end(now time.Time, r Reason, refused time.Duration) StepKind {
	c.abandon(now, "the call ended", nil, r) // hedges still in flight, if any
	c.release()                              // a slot taken for an attempt that will not go
	c.refused = refused
	e := &Error{Attempts: c.attempts, Reason: r, Waited: c.waited, RefusedWait: refused, Verdict: c.verdicts[c.last], Err: c.err}
	if c.route != nil {
		e.Targets = c.route.reports
	} else if c.tgt != 0 {
		e.Targets = []TargetReport{{Target: c.p.Fallback.name(int(c.tgt) - 1), Attempts: 1}}
	}
	c.finish(now, r, e)
	return StepDone
}

func (c *Call) finish(now time.Time, r Reason, err error) {
	c.done, c.reason, c.final = true, r, err
	if c.p.Observe != nil || c.reporter != nil {
		s := c.Summary(now)
		if c.p.Observe != nil {
			c.p.Observe(c.context(), s)
		}
		if c.reporter != nil {
			c.reporter.Report(c.context(), s)
		}
	}
}

// release gives back the limiter slot the attempt held, with no latency:
// the attempt never went, or was abandoned.
func (c *Call) release() {
	if c.held {
		c.held = false
		c.began = [7]byte{}
		c.p.Limiter.Release()
	}
}

func (c *Call) context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// A Driver makes the attempts of one logical call for Drive, on real time:
// Drive decides when, and the driver knows how. A Driver is used by one
// call at a time.
type Driver[T any] interface {
	// Attempt makes attempt n (1 is the first) under ctx, the caller's.
	// deadline, if not zero, is when the attempt must be cut off — the
	// sooner of the policy's AttemptTimeout and the call's deadline (the
	// caller's, or the policy's Timeout) — reporting the cut as a timeout.
	// Drive derives no context: cutting the attempt off is the driver's.
	Attempt(ctx context.Context, n int, deadline time.Time) (T, error)
	// Verdict reads an attempt's outcome under p, the policy Drive was
	// given: a nil error for a success; otherwise the failure's final
	// verdict and the error to record it with. The verdict is
	// p.Verdict(failure, own) — the policy's Classify first, then the
	// driver's own rules (own; the zero Verdict for none), then the
	// built-in ones — and then the driver's guard: a driver that cannot
	// repeat the attempt (a request body it cannot replay) makes a
	// retryable verdict permanent, saying why.
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

// Drive runs one logical call under p (nil means Default) on real time:
// attempts through d until one succeeds or the policy says to stop. It
// returns the successful outcome with a nil error; when the call gives up,
// the last attempt's outcome (undiscarded, the zero T if none was made)
// with the *Error; and when ctx is done, the outcome in hand with
// context.Cause(ctx). It starts no goroutines.
//
// ctx bounds the call; the policy's Timeout bounds it further. Drive
// derives no context for it: the Timeout is the call's deadline, which
// cuts off each attempt (the deadline Attempt is given), lets no wait
// start that cannot finish, and bounds a wait in the limiter's queue. A
// driver that is a RequestBudgeter gives the call its request budget.
func Drive[T any, D Driver[T]](ctx context.Context, p *Policy, d D) (T, error) {
	var first T
	return drive(ctx, p, d, first, nil)
}

// drive is Drive after an optional first attempt already made (Do's and
// Get's fast path): first and firstErr are its outcome when firstErr is
// non-nil.
func drive[T any, D Driver[T]](ctx context.Context, p *Policy, d D, first T, firstErr error) (T, error) {
	if p == nil {
		p = &defaultPolicy
	}
	var (
		none    time.Time // the zero time: "now, if anyone needs it"
		c       Call
		last    T    // the last failed outcome, kept until the next attempt goes
		holding bool // last is an outcome the driver has not discarded
	)
	deadline, _ := ctx.Deadline()
	if r, ok := any(d).(Reporter); ok {
		c.reporter = r
	}
	c.begin(p, none, p.callDeadline(none, deadline))
	c.ctx = ctx
	if b, ok := any(d).(RequestBudgeter); ok {
		c.request = b.RequestBudget()
	}
	jitter := false // whether the context's jitter source was looked for
	var router TargetDriver[T]
	if p.Fallback != nil {
		var ok bool
		if router, ok = any(d).(TargetDriver[T]); !ok {
			return last, c.stop(none, ReasonNoTarget, errNoRouter)
		}
	}
	if p.Hedge != nil && mayHedge(d) {
		// A hedged policy is never plain: no first attempt was made.
		return driveHedged(ctx, p, d, &c, router)
	}
	for {
		k := c.next(none, true)
		if k == stepAcquire {
			var err error
			if k, err = c.admit(ctx); err != nil {
				return last, err
			}
		}
		if k == StepDone {
			return last, c.final
		}
		if holding {
			d.Discard(last)
			var zero T
			last, holding = zero, false
		}
		var (
			v   T
			err error
		)
		switch {
		case firstErr != nil:
			v, err, firstErr = first, firstErr, nil
		case router != nil:
			v, err = router.AttemptTo(ctx, c.attempts, c.Target(), c.cut)
		default:
			v, err = d.Attempt(ctx, c.attempts, c.cut)
		}
		// The verdict goes straight into the Call's spare slot.
		var failure error
		c.verdicts[c.last^1], failure = d.Verdict(p, v, err)
		if failure == nil {
			c.Success(none)
			return v, nil
		}
		last, holding = v, true
		if ctx.Err() != nil { // the caller gave up: no retry, whatever happened
			c.Abort(none, context.Cause(ctx))
			return last, context.Cause(ctx)
		}
		if !jitter {
			// Looked for on the first failure: a call that succeeds at once
			// never walks the context for it.
			jitter = true
			if r, ok := ctx.Value(jitterKey{}).(backoff.Source); ok {
				c.rnd = r
			}
		}
		wait, k := c.fail(none, c.attempts, failure, &c.verdicts[c.last^1])
		if k != StepWait {
			return last, c.final
		}
		if c.Wait(ctx, wait) != nil {
			c.Abort(none, context.Cause(ctx))
			return last, context.Cause(ctx)
		}
	}
}

// errNoRouter is the error of a call under a Fallback whose driver cannot
// route attempts.
var errNoRouter = errors.New("recoil: the policy has a Fallback but the driver cannot send an attempt to a target (use DoTarget, GetTarget, recoilhttp.Transport or the recoilgrpc interceptors)")

// admit takes the limiter slot the step asked for and returns the step
// after it; a non-nil error ends the call, already recorded: the caller's
// cause when ctx ended the wait, else the *Error of a full limiter or of
// the policy's Timeout running out in the queue.
func (c *Call) admit(ctx context.Context) (StepKind, error) {
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
		return StepDone, c.stop(none, r, err)
	}
	c.held = true
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

// clock resolves the zero-means-now convention.
func clock(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}

// cause is what a budget prices a retry after a failure of class c at,
// timeout telling whether it timed out.
func cause(timeout bool, c Class) budget.Cause {
	switch {
	case timeout:
		return budget.CauseTimeout
	case c == ClassThrottled || c == ClassOverloaded:
		return budget.CauseThrottle
	}
	return budget.CauseError
}

func budgetResult(c Class) budget.Result {
	switch c {
	case ClassThrottled, ClassOverloaded:
		return budget.Overload
	case ClassPermanent:
		return budget.Permanent
	case ClassCanceled:
		return budget.Ignored
	default:
		return budget.Failure
	}
}

// breakerOutcome: a permanent failure means the dependency answered, so it
// counts as a success; a throttled one is about the caller's allowance, not
// the dependency's health, so it counts for nothing; cancellation likewise.
func breakerOutcome(c Class) breaker.Outcome {
	switch c {
	case ClassPermanent:
		return breaker.Success
	case ClassThrottled, ClassCanceled:
		return breaker.Ignored
	default:
		return breaker.Failure
	}
}

// jitterKey is the context key of WithJitter's source.
type jitterKey struct{}

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
