// want package:"offline"

// Package cenkwrap holds, written anew, a package's own generic retry
// helpers around cenkalti/backoff v5: they hand the caller's handler to
// backoff.Retry, which goes round on every error but a Permanent one.
package cenkwrap

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Options are the caller's settings for Do.
type Options struct {
	Tries    uint
	Interval time.Duration
	Exponent float64
}

// Handler is one attempt.
type Handler[R any] func() (R, error)

// Do retries handler, through an operation of its own that only calls
// it, on an ExponentialBackOff literal that leaves RandomizationFactor
// out: every caller's rounds come at the same times.
//
// case: flag nojitter
func Do[R any](ctx context.Context, handler Handler[R], o Options) (R, error) { // want Do:`libwork=2 every=2`
	operation := func() (R, error) {
		return handler()
	}
	return backoff.Retry(ctx, operation, backoff.WithBackOff(&backoff.ExponentialBackOff{ // want `nojitter: backoff.Retry waits a constant or purely exponential schedule`
		InitialInterval: o.Interval,
		Multiplier:      o.Exponent,
	}), backoff.WithMaxTries(o.Tries))
}

// Spread retries handler on the library's jittered ExponentialBackOff.
//
// case: clean
func Spread(ctx context.Context, handler func() (int, error)) (int, error) { // want Spread:`every=2`
	return backoff.Retry(ctx, handler, backoff.WithBackOff(backoff.NewExponentialBackOff()))
}
