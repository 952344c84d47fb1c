// Package backoff is a stub of cenkalti/backoff: jittered exponential
// backoff with a context.
package backoff

import (
	"context"
	"math/rand"
	"time"
)

type BackOff interface {
	NextBackOff() time.Duration
	Reset()
}

const Stop time.Duration = -1

// ExponentialBackOff doubles its interval; it answers Stop once
// MaxElapsedTime has passed, never when that is 0.
type ExponentialBackOff struct {
	InitialInterval     time.Duration
	RandomizationFactor float64
	MaxElapsedTime      time.Duration
	current             time.Duration
	start               time.Time
}

func NewExponentialBackOff() *ExponentialBackOff {
	return &ExponentialBackOff{InitialInterval: 500 * time.Millisecond, RandomizationFactor: 0.5,
		MaxElapsedTime: 15 * time.Minute, current: 500 * time.Millisecond, start: time.Now()}
}

func (b *ExponentialBackOff) NextBackOff() time.Duration {
	if b.current == 0 {
		b.current = b.InitialInterval
	}
	if b.MaxElapsedTime != 0 && time.Since(b.start) > b.MaxElapsedTime {
		return Stop
	}
	d := b.current
	if b.RandomizationFactor > 0 {
		d += time.Duration((rand.Float64()*2 - 1) * b.RandomizationFactor * float64(d))
	}
	b.current *= 2
	return d
}

// ConstantBackOff waits the same Interval every time.
type ConstantBackOff struct{ Interval time.Duration }

func NewConstantBackOff(d time.Duration) *ConstantBackOff { return &ConstantBackOff{Interval: d} }

func (b *ConstantBackOff) NextBackOff() time.Duration { return b.Interval }

func (b *ConstantBackOff) Reset() {}

// ZeroBackOff goes round at once, for ever.
type ZeroBackOff struct{}

func (b *ZeroBackOff) NextBackOff() time.Duration { return 0 }

func (b *ZeroBackOff) Reset() {}

type maxRetries struct {
	BackOff
	left int
}

func (b *maxRetries) NextBackOff() time.Duration {
	if b.left == 0 {
		return Stop
	}
	b.left--
	return b.BackOff.NextBackOff()
}

// WithMaxRetries stops b after max retries.
func WithMaxRetries(b BackOff, max uint64) BackOff { return &maxRetries{BackOff: b, left: int(max)} }

func (b *ExponentialBackOff) Reset() { b.current = b.InitialInterval }

func WithContext(b BackOff, ctx context.Context) BackOff { return b }

func Retry(op func() error, b BackOff) error {
	for {
		err := op()
		if err == nil {
			return nil
		}
		d := b.NextBackOff()
		if d == Stop {
			return err
		}
		timer := time.NewTimer(d)
		<-timer.C
	}
}

// PermanentError stops Retry.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

// Permanent wraps err so that Retry stops.
func Permanent(err error) error { return &PermanentError{Err: err} }

// Notify is told of each error before the wait.
type Notify func(error, time.Duration)

func RetryNotify(op func() error, b BackOff, notify Notify) error {
	return Retry(func() error {
		err := op()
		if err != nil && notify != nil {
			notify(err, 0)
		}
		return err
	}, b)
}
