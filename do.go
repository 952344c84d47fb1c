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
// the policy sets Timeout or AttemptTimeout, or a Hedge (each attempt's own,
// cancelled once another decides the call). Do runs the one retry loop
// (Drive): every attempt runs on the caller's goroutine but a hedge, which
// runs in a goroutine of its own. On the healthy path of a policy with no
// limiter, breaker, timeouts, observers, targets or hedge it reads no clock
// and allocates nothing.
func Do(ctx context.Context, p *Policy, op func(context.Context) error) error {
	// The healthy path of a plain policy, small enough to inline: one call
	// of op and, on success, one read of the budget (a full bucket writes
	// nothing).
	if p != nil && p.plain() {
		err := op(ctx)
		if err == nil {
			if p.Budget == nil && !p.bucket.Full() {
				p.fastSuccess()
			}
			return nil
		}
		return doRetry(ctx, p, op, err)
	}
	return doRetry(ctx, p, op, nil)
}

// doRetry is Do past its healthy path: the loop, after a first attempt
// already made when first is not nil.
//
//go:noinline
func doRetry(ctx context.Context, p *Policy, op func(context.Context) error, first error) error {
	_, err := drive(ctx, p, errDriver{op}, struct{}{}, first)
	return err
}

// Get is Do for an operation that returns a value: it returns the value of
// the first successful attempt, or the zero T with the error. With
// AttemptTimeout set, the attempt's context is cancelled when op returns, so
// the value must not depend on it (read a response body inside op).
func Get[T any](ctx context.Context, p *Policy, op func(context.Context) (T, error)) (T, error) {
	if p == nil {
		p = &defaultPolicy
	}
	var (
		v   T
		err error
	)
	if p.plain() {
		// The healthy path of a plain policy: one call of op, and on success
		// one read of the budget (a full bucket writes nothing).
		if v, err = op(ctx); err == nil {
			if p.Budget == nil && !p.bucket.Full() {
				p.fastSuccess()
			}
			return v, nil
		}
		v, err = drive(ctx, p, funcDriver[T]{op}, v, err)
	} else {
		var zero T
		v, err = drive(ctx, p, funcDriver[T]{op}, zero, nil)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// funcDriver drives Get's op: its error is the outcome, classified by the
// policy alone.
type funcDriver[T any] struct {
	op func(context.Context) (T, error)
}

func (d funcDriver[T]) Attempt(ctx context.Context, _ int, deadline time.Time) (T, error) {
	if !sooner(ctx, deadline) {
		return d.op(ctx)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return d.op(ctx)
}

func (funcDriver[T]) Verdict(p *Policy, _ T, err error) (Verdict, error) { return opVerdict(p, err) }
func (funcDriver[T]) Discard(T)                                          {}

// errDriver drives Do's op.
type errDriver struct {
	op func(context.Context) error
}

func (d errDriver) Attempt(ctx context.Context, _ int, deadline time.Time) (struct{}, error) {
	if !sooner(ctx, deadline) {
		return struct{}{}, d.op(ctx)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return struct{}{}, d.op(ctx)
}

// sooner reports whether deadline is set and comes before ctx's own: an
// attempt deadline the context does not already carry. Small enough to
// inline, so that an attempt with no deadline asks ctx nothing.
func sooner(ctx context.Context, deadline time.Time) bool {
	return !deadline.IsZero() && before(ctx, deadline)
}

// before is sooner for a deadline that is set.
func before(ctx context.Context, deadline time.Time) bool {
	dl, ok := ctx.Deadline()
	return !ok || deadline.Before(dl)
}

func (errDriver) Verdict(p *Policy, _ struct{}, err error) (Verdict, error) { return opVerdict(p, err) }
func (errDriver) Discard(struct{})                                          {}

// opVerdict classifies the error of an op (Do's or Get's) under p: the op
// has no rules of its own, and no guard.
func opVerdict(p *Policy, err error) (v Verdict, _ error) {
	if err != nil {
		p.verdict(&v, err, nil)
	}
	return v, err
}

// fastSuccess records a first-attempt success of a plain policy whose
// default bucket is not full (a full one has nothing to record).
func (p *Policy) fastSuccess() {
	p.bucket.RecordAt(time.Time{}, budget.Outcome{Attempt: 1, Result: budget.Success})
}

// plain reports a policy whose first attempt needs nothing around it: no
// limiter, breaker, timeouts, observers, targets or hedges, and a budget
// that never refuses a first attempt (the default token bucket, or none).
func (p *Policy) plain() bool {
	return p.Fallback == nil && p.plainCall()
}

// plainTarget returns the target of a first attempt under p, a plain
// policy but for its Fallback, when that attempt needs nothing around it
// either: the first target was never cooled and has no breaker or
// allowance to ask. Otherwise, or for a nil p, it returns nil.
func (p *Policy) plainTarget() *Target {
	if p == nil || p.Fallback == nil || !p.plainCall() {
		return nil
	}
	return p.Fallback.first()
}

// first returns the first target when an attempt may go to it without
// asking anything: it is not cooling (read without the clock: one ever
// cooled and not yet found cooled down by the loop counts as cooling) and
// has no breaker or allowance. Nil before the Fallback's first call (which
// the loop then makes). Small enough to inline.
func (f *Fallback) first() *Target {
	if u := f.until.Load(); u != nil && len(*u) > 0 && (*u)[0].Load() == 0 {
		if t := &f.Targets[0]; t.Breaker == nil && t.Allowance == nil {
			return t
		}
	}
	return nil
}

// plainCall is plain without the Fallback.
func (p *Policy) plainCall() bool {
	if p.Limiter != nil || p.Breaker != nil || p.Timeout > 0 || p.AttemptTimeout > 0 || p.Observe != nil || p.OnAttempt != nil || p.Hedge != nil {
		return false
	}
	switch p.Budget.(type) {
	case nil, noBudget:
		return true
	}
	return false
}

// DoTarget is Do for a policy with a Fallback: op receives, besides the
// attempt's context, the target the attempt is to go to (nil under a
// policy without a Fallback), and every attempt on every target counts
// against the one policy. It returns what Do returns; a *Error also says,
// in Targets, which targets were tried and why each was left. Under a
// Hedge, op may run several times at once.
func DoTarget(ctx context.Context, p *Policy, op func(ctx context.Context, t *Target) error) error {
	if p != nil && p.Fallback != nil && p.plainCall() {
		t := p.Fallback.first()
		if t == nil {
			return doTargetRetry(ctx, p, op, nil)
		}
		// As Do's healthy path: the first target, needing nothing asked.
		err := op(ctx, t)
		if err == nil {
			if p.Budget == nil && !p.bucket.Full() {
				p.fastSuccess()
			}
			return nil
		}
		return doTargetRetry(ctx, p, op, err)
	}
	return doTargetRetry(ctx, p, op, nil)
}

// doTargetRetry is DoTarget past its healthy path. Unlike doRetry it may
// be inlined: DoTarget is too large to be inlined itself, and a call less
// is a call less on a move to the next target.
func doTargetRetry(ctx context.Context, p *Policy, op func(ctx context.Context, t *Target) error, first error) error {
	_, err := drive(ctx, p, errTargetDriver{op}, struct{}{}, first)
	return err
}

// GetTarget is Get for a policy with a Fallback: op receives the target
// the attempt is to go to (nil under a policy without a Fallback). It
// returns the value of the first successful attempt, or the zero T with
// the error.
func GetTarget[T any](ctx context.Context, p *Policy, op func(ctx context.Context, t *Target) (T, error)) (T, error) {
	var (
		zero  T
		v     T
		first error
	)
	if t := p.plainTarget(); t != nil {
		if v, first = op(ctx, t); first == nil {
			if p.Budget == nil && !p.bucket.Full() {
				p.fastSuccess()
			}
			return v, nil
		}
	}
	v, err := drive(ctx, p, targetDriver[T]{op}, v, first)
	if err != nil {
		return zero, err
	}
	return v, nil
}

// targetDriver drives GetTarget's op, and errTargetDriver DoTarget's:
// Drive gives each attempt its target (AttemptTo). One func each, so a
// driver boxed in an interface allocates nothing.
type targetDriver[T any] struct {
	op func(context.Context, *Target) (T, error)
}

func (d targetDriver[T]) Attempt(ctx context.Context, n int, deadline time.Time) (T, error) {
	return d.AttemptTo(ctx, n, nil, deadline)
}

func (d targetDriver[T]) AttemptTo(ctx context.Context, _ int, t *Target, deadline time.Time) (T, error) {
	if !sooner(ctx, deadline) {
		return d.op(ctx, t)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return d.op(ctx, t)
}

func (targetDriver[T]) Verdict(p *Policy, _ T, err error) (Verdict, error) { return opVerdict(p, err) }
func (targetDriver[T]) Discard(T)                                          {}

type errTargetDriver struct {
	op func(context.Context, *Target) error
}

func (d errTargetDriver) Attempt(ctx context.Context, n int, deadline time.Time) (struct{}, error) {
	return d.AttemptTo(ctx, n, nil, deadline)
}

func (d errTargetDriver) AttemptTo(ctx context.Context, _ int, t *Target, deadline time.Time) (struct{}, error) {
	if !sooner(ctx, deadline) {
		return struct{}{}, d.op(ctx, t)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return struct{}{}, d.op(ctx, t)
}

func (errTargetDriver) Verdict(p *Policy, _ struct{}, err error) (Verdict, error) {
	return opVerdict(p, err)
}
func (errTargetDriver) Discard(struct{}) {}
