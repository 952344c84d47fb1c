// Package backoff is a stub of jpillora/backoff: a doubling duration,
// randomised only when Jitter is set.
package backoff

import (
	"math"
	"math/rand"
	"time"
)

// Backoff counts attempts and says how long to wait before the next.
type Backoff struct {
	Factor   float64
	Jitter   bool
	Min, Max time.Duration
	attempt  float64
}

// Duration returns the next wait and counts the attempt.
func (b *Backoff) Duration() time.Duration {
	d := b.ForAttempt(b.attempt)
	b.attempt++
	return d
}

// ForAttempt returns the wait before the given attempt.
func (b *Backoff) ForAttempt(attempt float64) time.Duration {
	d := float64(b.Min) * math.Pow(b.Factor, attempt)
	if b.Jitter {
		d = rand.Float64()*(d-float64(b.Min)) + float64(b.Min)
	}
	return min(time.Duration(d), b.Max)
}

// Reset starts the count again.
func (b *Backoff) Reset() { b.attempt = 0 }
