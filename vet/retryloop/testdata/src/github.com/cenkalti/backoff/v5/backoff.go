// Package backoff is a stub of cenkalti/backoff v5: a generic Retry whose
// operation may hand back the server's wait.
package backoff

import (
	"context"
	"math/rand"
	"time"
)

// Operation is one attempt.
type Operation[T any] func() (T, error)

// RetryOption sets a Retry's policy.
type RetryOption func()

// PermanentError stops Retry.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

// Permanent wraps err so that Retry stops.
func Permanent(err error) error { return &PermanentError{Err: err} }

// RetryAfterError makes Retry wait the server's time.
type RetryAfterError struct{ Duration time.Duration }

func (e *RetryAfterError) Error() string { return "retry after" }

// RetryAfter makes Retry wait seconds before the next attempt.
func RetryAfter(seconds int) error {
	return &RetryAfterError{Duration: time.Duration(seconds) * time.Second}
}

// Retry runs op until it succeeds, with jittered waits.
func Retry[T any](ctx context.Context, op Operation[T], opts ...RetryOption) (T, error) {
	for {
		v, err := op()
		if err == nil {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second)))):
		}
	}
}

// BackOff gives the wait before each next attempt.
type BackOff interface {
	NextBackOff() time.Duration
	Reset()
}

// ExponentialBackOff grows its interval by Multiplier, randomised by
// RandomizationFactor (none when it is left out of a literal).
type ExponentialBackOff struct {
	InitialInterval     time.Duration
	RandomizationFactor float64
	Multiplier          float64
	MaxInterval         time.Duration
	current             time.Duration
}

// NewExponentialBackOff has a RandomizationFactor of 0.5.
func NewExponentialBackOff() *ExponentialBackOff {
	return &ExponentialBackOff{InitialInterval: 500 * time.Millisecond, RandomizationFactor: 0.5, Multiplier: 1.5, MaxInterval: time.Minute}
}

// NextBackOff is the next interval.
func (b *ExponentialBackOff) NextBackOff() time.Duration {
	d := b.current
	b.current = time.Duration(float64(b.current) * b.Multiplier)
	return d
}

// Reset starts the intervals again.
func (b *ExponentialBackOff) Reset() { b.current = b.InitialInterval }

// WithBackOff makes Retry wait what b says.
func WithBackOff(b BackOff) RetryOption { return func() { _ = b } }

// WithMaxTries bounds the attempts.
func WithMaxTries(n uint) RetryOption { return func() { _ = n } }
