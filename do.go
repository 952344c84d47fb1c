package recoil

import (
	"context"
	"time"

	"github.com/recoil-go/recoil/budget"
)

// Do calls op until it succeeds or the policy p (nil means Default) says to
// stop, waiting between attempts on real time. It returns nil on success; a
// *Error when it gives up (errors.Is finds the reason's sentinel, and the last
// error of op); and context.Cause(ctx) as soon as ctx is done, also in the
// middle of a wait.
//
// op receives the context for its attempt: ctx itself, or a child of it when
// the policy sets AttemptTimeout. Do starts no goroutines, and on the healthy
// path reads no clock and allocates nothing.
func Do(ctx context.Context, p *Policy, op func(context.Context) error) error {
	if p == nil {
		p = Default
	}
	wrapped := func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) }
	if !p.plain() {
		_, err := run(ctx, p, wrapped, nil)
		return err
	}
	err := op(ctx)
	if err == nil {
		p.fastSuccess()
		return nil
	}
	_, err = run(ctx, p, wrapped, err)
	return err
}

// Get is Do for an operation that returns a value: it returns the value of
// the first successful attempt. With AttemptTimeout set, the attempt's context
// is cancelled when op returns, so the value must not depend on it (read a
// response body inside op).
func Get[T any](ctx context.Context, p *Policy, op func(context.Context) (T, error)) (T, error) {
	if p == nil {
		p = Default
	}
	if p.plain() {
		// The healthy path of a plain policy: one call of op, and on success
		// one read of the budget (a full bucket writes nothing).
		v, err := op(ctx)
		if err == nil {
			p.fastSuccess()
			return v, nil
		}
		return run(ctx, p, op, err)
	}
	return run(ctx, p, op, nil)
}

// fastSuccess records a first-attempt success of a plain policy: nothing
// to do when the budget is NoBudget or its bucket is full.
func (p *Policy) fastSuccess() {
	if p.Budget == nil && !p.bucket.Full() {
		p.bucket.RecordAt(time.Time{}, budget.Outcome{Attempt: 1, Result: budget.Success})
	}
}

// plain reports a policy whose first attempt needs nothing around it: no
// limiter, breaker, timeouts or observers, and a budget that never refuses
// a first attempt (the default token bucket, or none).
func (p *Policy) plain() bool {
	if p.Limiter != nil || p.Breaker != nil || p.Timeout > 0 || p.AttemptTimeout > 0 || p.Observe != nil || p.OnAttempt != nil {
		return false
	}
	switch p.Budget.(type) {
	case nil, noBudget:
		return true
	}
	return false
}

// run is the retry loop. A non-nil first is the error of a first attempt
// already made by Get's fast path.
func run[T any](ctx context.Context, p *Policy, op func(context.Context) (T, error), first error) (T, error) {
	var zero T
	parent := ctx
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.Timeout, ErrDeadline)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	var none time.Time // the zero time: "now, if anyone needs it"
	var c Call
	c.begin(p, none, deadline)
	for {
		if p.Limiter != nil {
			if err := p.Limiter.Acquire(ctx); err != nil {
				if parent.Err() != nil {
					c.Abort(none, context.Cause(parent))
					return zero, context.Cause(parent)
				}
				return zero, c.Stop(none, ReasonLimit, err)
			}
		}
		if err := c.Start(none); err != nil {
			if p.Limiter != nil {
				p.Limiter.Release()
			}
			return zero, err
		}
		var v T
		var err error
		if first != nil {
			err, first = first, nil
		} else {
			v, err = attempt(ctx, p, op)
		}
		if p.Limiter != nil {
			p.Limiter.Release()
		}
		if err == nil {
			c.Success(none)
			return v, nil
		}
		if parent.Err() != nil {
			c.Abort(none, context.Cause(parent))
			return zero, context.Cause(parent)
		}
		if ctx.Err() != nil { // the policy's own Timeout ran out mid-attempt
			_, stop := c.FailVerdict(none, err, Verdict{Class: ClassTransient, Timeout: true, Reason: "call timed out"})
			return zero, stop
		}
		wait, stop := c.Fail(none, err)
		if stop != nil {
			return zero, stop
		}
		if c.Wait(ctx, wait) != nil {
			if parent.Err() != nil {
				c.Abort(none, context.Cause(parent))
				return zero, context.Cause(parent)
			}
			return zero, c.Stop(none, ReasonDeadline, nil)
		}
	}
}

// attempt runs op once, under AttemptTimeout when the policy sets one.
func attempt[T any](ctx context.Context, p *Policy, op func(context.Context) (T, error)) (T, error) {
	if p.AttemptTimeout <= 0 {
		return op(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, p.AttemptTimeout)
	defer cancel()
	return op(ctx)
}
