// want package:"offline"

// Package deafoption holds, written anew, calls of a retry helper handed
// a pause option whose literal sleeps with time.Sleep: the helper calls it
// before each attempt, so the caller waits there, deaf to its context.
package deafoption

import (
	"context"
	"errors"
	"time"

	"example.com/retryopts"
)

var errBusy = errors.New("store busy")

type store interface {
	Put(ctx context.Context, key, val string) error
}

// saveAlert retries the write with a pause that sleeps while ctx is in
// scope.
//
// case: flag deafwait
func saveAlert(ctx context.Context, s store, key, val string) error {
	return retryopts.Do(func(int) error { // want `deafwait: retryopts.Do waits with time.Sleep in its option retryopts.Pause and cannot hear ctx`
		return s.Put(ctx, key, val)
	}, retryopts.Limit(5), retryopts.Pause(time.Second))
}

// saveAlertHeard is its twin with the pause that selects on ctx.
//
// case: clean
func saveAlertHeard(ctx context.Context, s store, key, val string) error {
	return retryopts.Do(func(int) error {
		return s.Put(ctx, key, val)
	}, retryopts.Limit(5), retryopts.PauseCtx(ctx, time.Second))
}

// saveAlertDetached has no context to hear: the store call is made under
// a Background it never cancels.
//
// case: clean
func saveAlertDetached(s store, key, val string) error {
	return retryopts.Do(func(int) error {
		return s.Put(context.Background(), key, val)
	}, retryopts.Limit(5), retryopts.Pause(time.Second))
}
