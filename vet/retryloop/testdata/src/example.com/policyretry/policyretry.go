// Package policyretry is a stand-in, written anew, for a retry helper
// that retries a function on the schedule of a BackOff policy its caller
// hands in, as mailgun/holster's retry.Until does.
package policyretry

import (
	"context"
	"math/rand/v2"
	"time"
)

// BackOff says how long to wait before the next attempt, and whether to
// make one.
type BackOff interface {
	Next() (time.Duration, bool)
	// Peek says what Next would, without counting an attempt.
	Peek() time.Duration
}

// ConstBackOff waits the same interval every time.
type ConstBackOff struct{ interval time.Duration }

// Interval returns a BackOff that always waits d.
func Interval(d time.Duration) *ConstBackOff { return &ConstBackOff{interval: d} }

// Next returns the interval.
func (b *ConstBackOff) Next() (time.Duration, bool) { return b.interval, true }

// Peek returns the interval.
func (b *ConstBackOff) Peek() time.Duration { return b.interval }

// JitterBackOff waits a random time up to its ceiling.
type JitterBackOff struct{ ceiling time.Duration }

// Jitter returns a BackOff that waits a random time in [0, d].
func Jitter(d time.Duration) *JitterBackOff { return &JitterBackOff{ceiling: d} }

// Next returns a random time up to the ceiling.
func (b *JitterBackOff) Next() (time.Duration, bool) { return rand.N(b.ceiling + 1), true }

// Peek returns a random time up to the ceiling.
func (b *JitterBackOff) Peek() time.Duration { return rand.N(b.ceiling + 1) }

// OddBackOff waits at random but peeks its ceiling: its two waits
// disagree.
type OddBackOff struct{ ceiling time.Duration }

// Next returns a random time up to the ceiling.
func (b *OddBackOff) Next() (time.Duration, bool) { return rand.N(b.ceiling + 1), true }

// Peek returns the ceiling.
func (b *OddBackOff) Peek() time.Duration { return b.ceiling }

// Until calls f until it succeeds or the context ends, waiting what
// backOff says between attempts.
func Until(ctx context.Context, backOff BackOff, f func(context.Context) error) error {
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		interval, again := backOff.Next()
		if !again {
			return err
		}
		t := time.NewTimer(interval)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}
