// Package retryopts is a stand-in for a small retry helper configured by
// options it calls before each attempt; one of them pauses with
// time.Sleep, another in a select on a context.
package retryopts

import (
	"context"
	"math/rand/v2"
	"time"
)

// Option is called before each attempt with its number; false stops.
type Option func(attempt int) bool

// Do runs op until it succeeds or an option says stop.
func Do(op func(attempt int) error, opts ...Option) error {
	var err error
	for n := 0; ; n++ {
		for _, o := range opts {
			if !o(n) {
				return err
			}
		}
		if err = op(n); err == nil {
			return nil
		}
	}
}

// Limit stops after n attempts.
func Limit(n int) Option {
	return func(a int) bool { return a < n }
}

// Pause sleeps a random time up to d before every attempt but the first.
func Pause(d time.Duration) Option {
	return func(a int) bool {
		if a > 0 {
			time.Sleep(rand.N(d))
		}
		return true
	}
}

// PauseCtx is Pause in a select on ctx: a cancelled ctx stops.
func PauseCtx(ctx context.Context, d time.Duration) Option {
	return func(a int) bool {
		if a == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(rand.N(d)):
			return true
		}
	}
}
