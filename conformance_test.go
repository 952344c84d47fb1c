package recoil_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/conformance"
)

// Every row of the conformance table through recoil.Do, on the virtual time
// of a synctest bubble: the same attempts, stop reason, error identity and
// waits as the HTTP Transport and the simulator (their own tests run the
// same rows).
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
				o := row.Next(int(calls.Add(1)))
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
			if p.Fallback != nil {
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
