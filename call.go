package recoil

import (
	"context"
	"time"

	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
)

// Call is one logical call's retry state. It turns each attempt's outcome
// into the next step through the policy's Decide, tells the budget and the
// breaker what happened, and reports to the policy's observers. Do and Get
// drive a Call on real time; a simulator, an HTTP transport or a gRPC
// interceptor drives it on its own clock, so every one of them makes the same
// decisions.
//
// The sequence is Begin, then for each attempt Start and either Success or
// Fail; Fail returns the wait before the next attempt or the error to give
// up with. Abort ends a call the caller abandoned. A zero now means "the
// current time" and lets the healthy path skip the clock; the Call reads the
// clock itself only on failure (and at both ends when Observe is set).
//
// A Call is a value with no goroutines and no allocations of its own. It is
// not safe for concurrent use; the zero Call is not usable.
type Call struct {
	p        *Policy
	budget   Budget
	deadline time.Time
	start    time.Time
	attempts int
	waited   time.Duration
	prev     time.Duration
	after    budget.Cause
	verdict  Verdict
	err      error
	request  Budget // the request's own budget (hop protocol); nil if none
	inFlight bool   // an attempt was started and not yet reported
	done     bool
	reason   Reason      // why the call ended, once done
	final    error       // what the call ended with, once done
	timer    *time.Timer // Wait's, made on the first wait that needs one
}

// Begin starts a logical call under p (nil means Default) that must finish
// by deadline (zero means no deadline).
func (p *Policy) Begin(now, deadline time.Time) Call {
	var c Call
	c.begin(p, now, deadline)
	return c
}

// begin initialises a zero c in place; Get uses it to keep the Call where it
// lives. Setting fields one by one, rather than assigning a composite
// literal, saves copying the whole struct (measured: 12 ns of 21).
func (c *Call) begin(p *Policy, now, deadline time.Time) {
	if p == nil {
		p = Default
	}
	c.p, c.budget, c.deadline = p, p.budget(), deadline
	if p.Observe != nil {
		c.start = clock(now)
	}
}

// SetRequestBudget gives the call a budget of its own, asked after the
// policy's before every retry: the hop protocol's retry budget for the call
// tree. Set it before the first attempt.
func (c *Call) SetRequestBudget(b Budget) { c.request = b }

// Summary reports the call so far, or as it ended. now (zero: the current
// time) dates Elapsed, which is zero unless Observe was set when the call
// began.
func (c *Call) Summary(now time.Time) Summary {
	s := Summary{Attempts: c.attempts, Reason: c.reason, Waited: c.waited, Verdict: c.verdict, LastErr: c.err, Err: c.final}
	if !c.start.IsZero() {
		s.Elapsed = clock(now).Sub(c.start)
	}
	return s
}

// Wait sleeps d on real time, for a driver of the call that runs on real
// time (Do, Get, an HTTP transport). It returns nil after d, or ctx's
// error as soon as ctx is done; a wait of zero or less returns at once and
// starts no timer. The timer is made once per call and reused.
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

// Attempts returns the number of attempts started so far.
func (c *Call) Attempts() int { return c.attempts }

// Waited returns the total of the waits decided so far.
func (c *Call) Waited() time.Duration { return c.waited }

// Start is called before each attempt. It asks the budget (first attempt
// only) and the breaker, and returns an *Error if either refuses; the call is
// then over.
func (c *Call) Start(now time.Time) error {
	p := c.p
	if c.attempts == 0 && c.budget != nil && !c.budget.AdmitAt(now) {
		return c.stop(now, ReasonBudget, 0)
	}
	if p.Breaker != nil && !p.Breaker.AllowAt(now) {
		return c.stop(now, ReasonCircuitOpen, 0)
	}
	c.attempts++
	c.inFlight = true
	return nil
}

// Success reports that the attempt just started succeeded; the call is over.
func (c *Call) Success(now time.Time) {
	p := c.p
	c.inFlight = false
	if c.budget != nil {
		c.budget.RecordAt(now, budget.Outcome{Attempt: c.attempts, Result: budget.Success, After: c.after})
	}
	if p.Breaker != nil {
		p.Breaker.RecordAt(now, breaker.Success)
	}
	if p.OnAttempt != nil {
		p.OnAttempt(AttemptEvent{Attempt: c.attempts, Retry: false})
	}
	c.finish(now, ReasonNone, nil)
}

// Fail reports that the attempt just started failed with err, classified by
// the policy (see Policy.Verdict). It returns the wait before the next
// attempt, or a non-nil *Error when the call gives up.
func (c *Call) Fail(now time.Time, err error) (time.Duration, error) {
	return c.FailVerdict(now, err, c.p.Verdict(err))
}

// FailVerdict is Fail with a verdict the caller already has (an HTTP
// transport classifies the response itself).
func (c *Call) FailVerdict(now time.Time, err error, v Verdict) (time.Duration, error) {
	p := c.p
	c.err, c.verdict = err, v
	c.inFlight = false
	if c.budget != nil {
		c.budget.RecordAt(now, budget.Outcome{Attempt: c.attempts, Result: budgetResult(v.Class), After: c.after})
	}
	if p.Breaker != nil {
		p.Breaker.RecordAt(now, breakerOutcome(v))
	}
	if !c.deadline.IsZero() {
		now = clock(now) // the deadline rule needs the time; nothing else here does
	}
	d := p.Decide(Failure{Attempt: c.attempts, Verdict: v, Now: now, Deadline: c.deadline, PrevWait: c.prev, RequestBudget: c.request})
	if p.OnAttempt != nil {
		p.OnAttempt(AttemptEvent{Attempt: c.attempts, Err: err, Verdict: v, Retry: d.Retry, Wait: d.Wait, Reason: d.Reason})
	}
	if !d.Retry {
		return 0, c.stop(now, d.Reason, d.Wait)
	}
	c.prev = d.Wait
	c.waited += d.Wait
	c.after = cause(v)
	return d.Wait, nil
}

// Abort ends a call the caller abandoned (its context was cancelled) with
// cause, reporting it to Observe. An attempt started and not yet reported
// counts for nothing in the budget and breaker (it frees a half-open probe);
// one already reported is not reported again.
func (c *Call) Abort(now time.Time, cause error) {
	if c.done {
		return
	}
	p := c.p
	if c.inFlight {
		c.inFlight = false
		if c.budget != nil {
			c.budget.RecordAt(now, budget.Outcome{Attempt: c.attempts, Result: budget.Ignored})
		}
		if p.Breaker != nil {
			p.Breaker.RecordAt(now, breaker.Ignored)
		}
	}
	c.finish(now, ReasonCanceled, cause)
}

// Stop ends the call for a reason found outside the decision (a limiter
// shed the attempt, the policy's Timeout ran out) and returns its *Error.
func (c *Call) Stop(now time.Time, r Reason, err error) error {
	if err != nil {
		c.err = err
	}
	return c.stop(now, r, 0)
}

func (c *Call) stop(now time.Time, r Reason, wait time.Duration) error {
	e := &Error{Attempts: c.attempts, Reason: r, Waited: c.waited, Wait: wait, Verdict: c.verdict, Err: c.err}
	c.finish(now, r, e)
	return e
}

func (c *Call) finish(now time.Time, r Reason, err error) {
	c.done, c.reason, c.final = true, r, err
	if c.p.Observe != nil {
		c.p.Observe(c.Summary(now))
	}
}

// clock resolves the zero-means-now convention.
func clock(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}

// cause is what a budget prices a retry after the failure v at.
func cause(v Verdict) budget.Cause {
	switch {
	case v.Timeout:
		return budget.CauseTimeout
	case v.Class == ClassThrottled || v.Class == ClassOverloaded:
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
func breakerOutcome(v Verdict) breaker.Outcome {
	switch v.Class {
	case ClassPermanent:
		return breaker.Success
	case ClassThrottled, ClassCanceled:
		return breaker.Ignored
	default:
		return breaker.Failure
	}
}
