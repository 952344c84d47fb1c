package retrywrap

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// UntilDone runs action every interval until it succeeds, through the
// Poll family: a failure is answered "not yet", so its callers' work is
// retried on a constant interval.
//
// case: flag nojitter
func UntilDone(ctx context.Context, interval time.Duration, action func() error) error { // want UntilDone:`libwork=3`
	return wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) { // want `nojitter: wait.PollUntilContextCancel goes round on a failure`
		if err := action(); err != nil {
			return false, nil
		}
		return true, nil
	})
}

// AwaitState polls check, the caller's own condition, every interval: its
// callers decide what "not yet" means.
//
// case: clean
func AwaitState(ctx context.Context, interval time.Duration, check func(context.Context) (bool, error)) error { // want AwaitState:`waits=true`
	return wait.PollUntilContextCancel(ctx, interval, true, check)
}
