// want package:"offline"

// Package libscheds holds, written anew, waits taken from backoff
// libraries whose randomness is off unless asked for: jpillora/backoff's
// Jitter field and go-resiliency's Retrier.SetJitter.
package libscheds

import (
	"context"
	"time"

	"github.com/eapache/go-resiliency/retrier"
	"github.com/jpillora/backoff"
)

func dial(ctx context.Context) error { return nil }

// A reconnect loop on a Backoff that leaves Jitter out: every client
// that lost the server together redials together.
//
// case: flag nojitter
func redial(ctx context.Context) error {
	b := &backoff.Backoff{Min: 100 * time.Millisecond, Max: 10 * time.Second, Factor: 2}
	for {
		err := dial(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(b.Duration()): // want `nojitter: this wait in a retry loop has a constant`
		}
	}
}

// The same loop with Jitter set.
//
// case: clean
func redialJittered(ctx context.Context) error {
	b := &backoff.Backoff{Min: 100 * time.Millisecond, Max: 10 * time.Second, Factor: 2, Jitter: true}
	for {
		err := dial(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(b.Duration()):
		}
	}
}

// A Retrier on a constant schedule never given a jitter.
//
// case: flag nojitter
func dialRetrier(ctx context.Context) error {
	r := retrier.New(retrier.ConstantBackoff(5, time.Second), nil)
	return r.RunCtx(ctx, dial) // want `nojitter: Retrier.RunCtx waits a constant or purely exponential schedule`
}

// The same Retrier, jittered.
//
// case: clean
func dialRetrierJittered(ctx context.Context) error {
	r := retrier.New(retrier.ConstantBackoff(5, time.Second), nil)
	r.SetJitter(0.5)
	return r.RunCtx(ctx, dial)
}
