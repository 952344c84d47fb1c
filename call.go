package recoil

import (
	"context"
	"time"

	"github.com/recoil-go/recoil/backoff"
)

// This file is the state machine of recoil's one retry loop: Call. Drive
// (drive.go) runs it on real time for every driver that can block — Do and
// Get, the HTTP Transport, the gRPC interceptors, the load driver — which
// supplies only how to make one attempt and how to read its outcome
// (Driver). A driver on virtual time (the simulator) cannot block, so it
// steps the Call itself: Next says what to do, the driver does it on its
// own clock and reports back with Success or Fail, which say what to do
// next. The boundary runs one way: drivers call into the engine, which
// imports none of them.
//
// A Call's verbs, all in this file, each with one meaning: Next admits the
// next attempt or ends the call, Hedge admits an attempt beside those in
// flight (admission: admit.go, what an attempt takes: permit.go); Success
// and Fail (SuccessOf and FailOf under a Hedge) take an attempt's outcome
// (outcome.go); Abort ends a call its caller abandoned; Wait sleeps on
// real time. Every way a call ends goes through finish, which reports it
// once.

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
// Call reads the clock itself only where a deadline, a timed attempt or an
// observer needs it.
//
// Each attempt holds a permit for what it took — a limiter slot, the
// breakers' probes, its target's allowance, the policy's and the request's
// budgets, its start and its target — which its outcome settles, or which
// is given back whole when the attempt is refused or never goes.
//
// Drive runs a Call on real time; drive one yourself only on a clock of your
// own (a simulation). A Call starts no goroutines. It allocates only when
// it ends with a *Error, and under a Fallback or a Hedge: its route, made
// once its first attempt fails or is raced (Drive's call has one beside
// it, or lent), a copy of its target reports for each Summary and *Error,
// the reports of a call that passed more than three targets, a name for
// each unnamed target in them, and the permits of more than two hedged
// attempts in flight. It is not safe for concurrent use; the zero Call is
// not usable.
type Call struct {
	p        *Policy
	ctx      context.Context // the caller's, for observers and costs; nil means Background
	budget   Budget          // the policy's, resolved; nil for NoBudget
	request  Budget          // the request's own budget (the hop protocol's); nil if none
	rnd      backoff.Source  // the call's own jitter source; nil means the policy's
	deadline time.Time
	start    time.Time // when the call began, if an observer wants Elapsed
	cut      time.Time // the attempt under way must be cut off then; zero for never
	attempts int
	waited   time.Duration
	prev     time.Duration
	refused  time.Duration // the wait the call stopped over, if any
	cur      permit        // the next attempt's, as it is admitted; then, without a Hedge, the one in flight
	last     Verdict       // the last failure's
	err      error         // the last failure's error
	final    error         // what the call ended with, once done
	reason   Reason        // why the call ended, once done
	admitted bool          // the budget admitted the call
	inFlight bool          // an attempt was started and not yet reported
	done     bool
	quick    bool        // the first attempt went to the Fallback's first target with no route made
	pinned   bool        // the first attempt was made before the Call began, to the first target
	timed    bool        // the policy times attempts (Policy.wantsLatency), asked once per call
	routed   bool        // the call has its route (Call.route)
	beside   bool        // the route is the one beside the Call in a driven: Drive's, on its stack
	jitters  bool        // Drive's: ctx may carry a jitter source (WithJitter), looked for when a wait is first decided
	rt       *route      // the route, when it is not beside the Call: a hedged Drive's, or made on the heap
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
		return p.timeoutDeadline(now, deadline)
	}
	return deadline
}

// timeoutDeadline is callDeadline under a Timeout.
func (p *Policy) timeoutDeadline(now, deadline time.Time) time.Time {
	if d := clock(now).Add(p.Timeout); deadline.IsZero() || d.Before(deadline) {
		return d
	}
	return deadline
}

// begin initialises a zero c in place, with deadline already final.
func (c *Call) begin(p *Policy, now, deadline time.Time) {
	c.p, c.budget, c.deadline = p, p.budget(), deadline
	c.cur.target = -1
	// Whether attempts are timed, asked of a policy with something that
	// could want latencies; most stop at the first test.
	c.timed = (p.Limiter != nil || p.Breaker != nil || p.Fallback != nil && p.Fallback.breakers()) && p.wantsLatency()
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

// Target returns the target the call's attempts now go to — the one Next
// or Hedge just started, or the last one's — under a policy with a
// Fallback; nil otherwise, and before the first attempt. A driver on a
// clock of its own sends the attempt Next starts to it.
func (c *Call) Target() *Target {
	if i := c.targetIndex(); i >= 0 {
		return &c.p.Fallback.Targets[i]
	}
	return nil
}

// targetIndex is the index of Target in the Fallback; -1 for none.
func (c *Call) targetIndex() int {
	if c.quick {
		return 0
	}
	if r := c.route(); r != nil && r.f != nil {
		return r.cur
	}
	return -1
}

// targetName is the name of target i, "" for none (-1).
func (c *Call) targetName(i int) string {
	if i < 0 {
		return ""
	}
	return c.p.Fallback.name(i)
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
		Verdict: c.last, LastErr: c.err, Err: c.final, Targets: c.targetReports()}
	if r := c.route(); r != nil {
		s.Hedges, s.Wasted, s.RefusedHedges = r.hedges, r.wasted, r.refused
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
// limiter sheds the attempt: ReasonLimit), asks the breaker, and under a
// Fallback picks the target and asks its breaker and allowance.
func (c *Call) Next(now time.Time) Step {
	if c.next(now, false) == StepAttempt {
		return Step{Kind: StepAttempt, Attempt: c.attempts, Deadline: c.cut}
	}
	return Step{Kind: StepDone, Err: c.final}
}

// HedgeAfter returns how long the driver should let the attempts in
// flight run before asking Hedge for another; zero when the call may start
// no hedge (no Hedge, its MaxHedges or the policy's MaxAttempts reached).
func (c *Call) HedgeAfter() time.Duration {
	p, r := c.p, c.route()
	if p.Hedge == nil || r == nil || c.done || len(r.flight) == 0 || r.hedges >= p.Hedge.maxHedges() || c.attempts >= p.maxAttempts() {
		return 0
	}
	return p.Hedge.AfterTarget(max(c.targetIndex(), 0))
}

// Hedge asks, once HedgeAfter has passed with attempts still in flight,
// for a hedge: another attempt to the same target. It returns the
// StepAttempt to make and true, or false when the call may not hedge now —
// no Hedge or hedges left, MaxAttempts reached, too close to the deadline,
// no free limiter slot, the breakers, the target's allowance or the
// budgets refusing. A refused hedge is not a failure: the attempts in
// flight go on, and what the hedge was given before the refusal is given
// back. It leaves the target as it was: the attempt it would have raced is
// still in flight there, and may answer.
func (c *Call) Hedge(now time.Time) (Step, bool) { return c.hedge(now) }

// Success reports that the attempt Next started succeeded; the call is over.
func (c *Call) Success(now time.Time) { c.succeed(now, c.attempts) }

// SuccessOf reports that attempt n succeeded, under a Hedge: the call is
// over, and the attempts still in flight are abandoned — counted for
// nothing in the budgets and breakers, reported to OnAttempt as canceled
// and to the Summary as wasted. The driver cancels them.
func (c *Call) SuccessOf(now time.Time, n int) { c.succeed(now, n) }

// Fail reports that the attempt Next started failed with err, classified
// as v (see Policy.Verdict). It returns StepWait with the wait before the
// next attempt, or StepDone with the *Error the call gives up with: at once
// when the call's deadline has passed, otherwise as Decide says and, for a
// retry Decide allows, as the budgets say — the policy's and then the
// request's are asked, and each charged, here and nowhere else; the
// request's refusing gives the policy's its charge back.
func (c *Call) Fail(now time.Time, err error, v Verdict) Step {
	return c.FailOf(now, c.attempts, err, v)
}

// FailOf reports that attempt n failed, under a Hedge. While other
// attempts are in flight a retryable failure decides nothing: it returns
// StepPending, and the call waits for them — and the driver asks Hedge at
// once, as gRFC A6 sends the next hedge on a non-fatal failure without
// waiting out the delay. Otherwise it is Fail: the others, if any, are
// abandoned (a permanent failure ends the call, a move to another target
// leaves them behind).
func (c *Call) FailOf(now time.Time, n int, err error, v Verdict) Step {
	switch wait, k := c.fail(now, n, err, &v); k {
	case StepWait:
		return Step{Kind: StepWait, Wait: wait}
	case StepPending:
		return Step{Kind: StepPending}
	}
	return Step{Kind: StepDone, Err: c.final}
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

// Abort ends a call its caller abandoned (its context was cancelled) with
// cause. Every attempt started and not yet reported counts for nothing in
// the budgets and breakers (it frees a half-open probe) and reaches
// OnAttempt as canceled; one already reported is not reported again. A
// retry paid for and not yet sent is refunded.
func (c *Call) Abort(now time.Time, cause error) {
	if c.done {
		return
	}
	c.leaveFlights(now, "the caller gave up", cause, ReasonCanceled)
	c.finish(now, ReasonCanceled, cause)
}

// end gives the call up for reason r, after err when it is not nil (the
// limiter's, say): its *Error becomes c.final. refused is the wait it
// stopped over, if any. It returns StepDone.
func (c *Call) end(now time.Time, r Reason, refused time.Duration, err error) StepKind {
	if c.done {
		return StepDone
	}
	if err != nil {
		c.err = err
	}
	c.leaveFlights(now, "the call ended", nil, r)
	c.refused = refused
	e := &Error{Attempts: c.attempts, Reason: r, Waited: c.waited, RefusedWait: refused, Verdict: c.last, Err: c.err,
		Targets: c.targetReports()}
	c.finish(now, r, e)
	return StepDone
}

// finish is the one place a call ends: after a success (err nil), when it
// gives up (end), or when its caller abandons it (Abort). What the next
// attempt's permit holds is given back, and the Summary is reported.
func (c *Call) finish(now time.Time, r Reason, err error) {
	if c.cur.holds() {
		c.cancel(now, &c.cur)
	}
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

func (c *Call) context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// clock resolves the zero-means-now convention.
func clock(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}
