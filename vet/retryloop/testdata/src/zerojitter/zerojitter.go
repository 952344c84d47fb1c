// want package:"offline"

// Package zerojitter holds, written anew, retry loops whose "jitter" is a
// random float in [0, 1) converted to a duration: truncated to 0, it
// randomises nothing.
package zerojitter

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"time"
)

var errBusy = errors.New("busy")

// call stands for a request to another service.
func call(ctx context.Context) error { return errBusy }

// retry waits 2^i seconds plus a "jitter" that is always 0 nanoseconds.
//
// case: flag nojitter
func retry(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := 0; ; i++ {
		select {
		case <-timer.C:
			err := call(ctx)
			if err == nil {
				return nil
			}
			jitter := time.Duration(rand.Float64())
			backoff := time.Duration(math.Min(math.Pow(2, float64(i))*float64(time.Second)+float64(jitter), float64(time.Minute)))
			timer.Reset(backoff) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration \(its random part, a float in \[0, 1\) converted to an integer, is always 0\)`
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// retryScaled scales the float before converting it: a real jitter.
//
// case: clean
func retryScaled(ctx context.Context) error {
	for i := range 5 {
		err := call(ctx)
		if err == nil {
			return nil
		}
		d := time.Duration(rand.Float64() * float64(time.Second<<i))
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errBusy
}
