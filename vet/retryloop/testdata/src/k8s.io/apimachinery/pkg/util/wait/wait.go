// Package wait is a stub of apimachinery's wait: a Backoff whose Step
// grows the duration by Factor and adds up to Jitter of it at random.
package wait

import (
	"context"
	"math/rand"
	"time"
)

// Backoff is a schedule: Duration grown by Factor for Steps steps, each
// randomised by up to Jitter of itself.
type Backoff struct {
	Duration time.Duration
	Factor   float64
	Jitter   float64
	Steps    int
	Cap      time.Duration
}

// Step returns the next wait.
func (b *Backoff) Step() time.Duration {
	d := b.Duration
	b.Duration = time.Duration(float64(b.Duration) * b.Factor)
	b.Steps--
	if b.Jitter > 0 {
		d += time.Duration(rand.Float64() * b.Jitter * float64(d))
	}
	return d
}

// ConditionFunc says whether it is done.
type ConditionFunc func() (bool, error)

// ExponentialBackoff repeats condition until done, sleeping between.
func ExponentialBackoff(backoff Backoff, condition ConditionFunc) error {
	for backoff.Steps > 0 {
		if ok, err := condition(); err != nil || ok {
			return err
		}
		time.Sleep(backoff.Step())
	}
	return context.DeadlineExceeded
}
