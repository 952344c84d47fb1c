// want package:"offline"

// Package cenkaltistop holds, written anew, retries driven by
// cenkalti/backoff v4 whose BackOff may never answer Stop: a constant
// one, or an ExponentialBackOff whose MaxElapsedTime is zero, keeps a
// failing operation going for ever unless something else ends it.
package cenkaltistop

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
)

type watcher struct {
	closed bool
}

func (w *watcher) dial(addr string) error                     { return nil }
func (w *watcher) watch(ctx context.Context, id string) error { return nil }

var errClosed = errors.New("watcher closed")

// A zero MaxElapsedTime spelt out: a registry that stays down is
// re-dialled for ever, jittered.
//
// case: flag unbounded
func rewatch(w *watcher, addr string) {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     time.Second,
		RandomizationFactor: 0.5,
		MaxElapsedTime:      0,
	}
	_ = backoff.Retry(func() error { return w.dial(addr) }, b) // want `unbounded: backoff.Retry retries until it succeeds with a BackOff that never answers Stop`
}

// The same with a minute's MaxElapsedTime: the library gives up.
//
// case: clean
func rewatchMinute(w *watcher, addr string) error {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     time.Second,
		RandomizationFactor: 0.5,
		MaxElapsedTime:      time.Minute,
	}
	return backoff.Retry(func() error { return w.dial(addr) }, b)
}

// NewExponentialBackOff's own MaxElapsedTime (15 minutes) bounds it.
//
// case: clean
func dialDefault(w *watcher, addr string) error {
	return backoff.Retry(func() error { return w.dial(addr) }, backoff.NewExponentialBackOff())
}

// The default made, then its MaxElapsedTime set to zero.
//
// case: flag unbounded
func dialZeroed(w *watcher, addr string) {
	b := backoff.NewExponentialBackOff()
	b.MaxElapsedTime = 0
	notify := func(err error, d time.Duration) {}
	_ = backoff.RetryNotify(func() error { return w.dial(addr) }, b, notify) // want `unbounded: backoff.RetryNotify retries until it succeeds`
}

// Set to an hour instead: bounded.
//
// case: clean
func dialHour(w *watcher, addr string) error {
	b := backoff.NewExponentialBackOff()
	b.MaxElapsedTime = time.Hour
	return backoff.Retry(func() error { return w.dial(addr) }, b)
}

// A constant second, for ever: neither jittered nor bounded.
//
// case: flag nojitter unbounded
func dialConstant(w *watcher, addr string) {
	_ = backoff.Retry(func() error { return w.dial(addr) }, backoff.NewConstantBackOff(time.Second)) // want `nojitter: backoff.Retry waits a constant` `unbounded: backoff.Retry retries until it succeeds`
}

// A constant second, five times at most.
//
// case: flag nojitter
func dialConstantFive(w *watcher, addr string) error {
	return backoff.Retry(func() error { return w.dial(addr) }, backoff.WithMaxRetries(backoff.NewConstantBackOff(time.Second), 5)) // want `nojitter: backoff.Retry waits a constant`
}

// No wait at all, for ever.
//
// case: flag unbounded
func dialZero(w *watcher, addr string) {
	_ = backoff.Retry(func() error { return w.dial(addr) }, &backoff.ZeroBackOff{}) // want `unbounded: backoff.Retry retries until it succeeds`
}

// A closed watcher ends it: the operation marks that error Permanent.
//
// case: clean
func rewatchUntilClosed(w *watcher, addr string) {
	b := &backoff.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: 0.5}
	_ = backoff.Retry(func() error {
		if w.closed {
			return backoff.Permanent(errClosed)
		}
		return w.dial(addr)
	}, b)
}

// The same, the Permanent made by a helper of the package.
//
// case: clean
func rewatchHelper(w *watcher, addr string) {
	b := &backoff.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: 0.5}
	_ = backoff.Retry(func() error { return w.attempt(addr) }, b)
}

func (w *watcher) attempt(addr string) error {
	if w.closed {
		return backoff.Permanent(errClosed)
	}
	return w.dial(addr)
}

// WithContext hands the caller's context to the library, which stops
// when it ends.
//
// case: clean
func watchCtx(ctx context.Context, w *watcher, id string) error {
	b := &backoff.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: 0.5}
	return backoff.Retry(func() error { return w.watch(ctx, id) }, backoff.WithContext(b, ctx))
}

// The operation is handed in: what it returns is out of sight.
//
// case: clean
func retryHanded(op func() error) error {
	b := &backoff.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: 0.5}
	return backoff.Retry(op, b)
}

// watchOnce dials and hands a later failure to rewatch in a goroutine:
// another Retry, no Permanent marker.
func (w *watcher) watchOnce(addr string) error {
	if err := w.dial(addr); err != nil {
		return err
	}
	go rewatch(w, addr)
	return nil
}

// The operation's helper starts a retry of its own in a goroutine; it
// marks nothing Permanent, so nothing ends this one.
//
// case: flag unbounded
func watchLoop(w *watcher, addr string) {
	b := &backoff.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: 0.5}
	_ = backoff.Retry(func() error { return w.watchOnce(addr) }, b) // want `unbounded: backoff.Retry retries until it succeeds`
}

// The operation answers success once the caller is gone: the caller's
// cancellation ends the retries, though the wait before that attempt
// does not hear it.
//
// case: flag deafwait
func watchUntilCancelled(ctx context.Context, w *watcher, id string) {
	b := &backoff.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: 0.5}
	_ = backoff.Retry(func() error { // want `deafwait: backoff.Retry waits on a context of its own`
		if ctx.Err() != nil {
			return nil
		}
		return w.watch(ctx, id)
	}, b)
}
