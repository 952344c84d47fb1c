package recoil_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/internal/conformance"
)

// Every row of the conformance table through recoil.Do, on the virtual time
// of a synctest bubble: the same attempts, stop reason, error identity and
// waits as the HTTP Transport and the simulator (their own tests run the
// same rows). A row with a request budget runs Do's op through recoil.Drive
// with a driver that gives the call that budget, as a hop-protocol driver
// does.
func TestConformanceDo(t *testing.T) {
	conformance.Run(t, conformance.Do, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			if row.CancelAt > 0 {
				time.AfterFunc(row.CancelAt, func() { cancel(conformance.ErrCallerLeft) })
			}
			var calls atomic.Int32 // a hedged call runs attempts at once
			op := func(ctx context.Context) error {
				o := row.Reached(int(calls.Add(1)), p)
				if o.After > 0 {
					tm := time.NewTimer(o.After)
					defer tm.Stop()
					select {
					case <-tm.C:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				if o.Kind != conformance.Hang {
					return o.Err()
				}
				return conformance.Block(ctx)
			}
			var err error
			if row.RequestBudget != nil {
				// As Do, with the request's own budget (the hop
				// protocol's): Do's driver, a RequestBudgeter.
				_, err = recoil.Drive(ctx, p, budgeted{op: op, acct: hop.NewAccount(*row.RequestBudget)})
			} else if p.Fallback != nil {
				err = recoil.DoTarget(ctx, p, func(ctx context.Context, _ *recoil.Target) error { return op(ctx) })
			} else {
				err = recoil.Do(ctx, p, op)
			}
			if n := int(calls.Load()); n != row.Attempts {
				t.Errorf("op called %d times, want %d", n, row.Attempts)
			}
			switch want := row.Is(); {
			case want == nil && err != nil:
				t.Errorf("Do() = %v, want nil", err)
			case want != nil && !errors.Is(err, want):
				t.Errorf("Do() = %v, want an error that is %v", err, want)
			}
		})
	})
}

// budgeted drives a Do op with a request budget of its own, for the rows
// that carry one.
type budgeted struct {
	op   func(context.Context) error
	acct *hop.Account
}

func (d budgeted) Attempt(ctx context.Context, _ int, deadline time.Time) (struct{}, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	return struct{}{}, d.op(ctx)
}

func (d budgeted) Verdict(p *recoil.Policy, _ struct{}, err error) (recoil.Verdict, error) {
	if err == nil {
		return recoil.Verdict{}, nil
	}
	return p.Verdict(err, recoil.Verdict{}), err
}

func (budgeted) Discard(struct{}) {}

func (d budgeted) RequestBudget() recoil.Budget { return d.acct }

func (d budgeted) AttemptTo(ctx context.Context, n int, _ *recoil.Target, deadline time.Time) (struct{}, error) {
	return d.Attempt(ctx, n, deadline)
}
