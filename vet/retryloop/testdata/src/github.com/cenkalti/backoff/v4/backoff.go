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

type ExponentialBackOff struct {
	InitialInterval time.Duration
	current         time.Duration
}

func NewExponentialBackOff() *ExponentialBackOff {
	return &ExponentialBackOff{InitialInterval: 500 * time.Millisecond, current: 500 * time.Millisecond}
}

func (b *ExponentialBackOff) NextBackOff() time.Duration {
	d := time.Duration(rand.Int63n(int64(b.current)))
	b.current *= 2
	return d
}

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
