// Package retry is a stub of sethvargo/go-retry: Do runs f until it
// returns no RetryableError, waiting what the Backoff says, hearing ctx.
package retry

import (
	"context"
	"math/rand"
	"time"
)

// Backoff gives the next wait, or stop.
type Backoff interface {
	Next() (time.Duration, bool)
}

// BackoffFunc is a Backoff made of a function.
type BackoffFunc func() (time.Duration, bool)

// Next calls f.
func (f BackoffFunc) Next() (time.Duration, bool) { return f() }

// RetryFunc is one attempt.
type RetryFunc func(ctx context.Context) error

type retryableError struct{ err error }

func (e *retryableError) Error() string { return e.err.Error() }

// RetryableError marks err to be retried.
func RetryableError(err error) error { return &retryableError{err} }

// Do runs f until it succeeds or returns an error not marked retryable.
func Do(ctx context.Context, b Backoff, f RetryFunc) error {
	for {
		err := f(ctx)
		if _, ok := err.(*retryableError); !ok {
			return err
		}
		next, stop := b.Next()
		if stop {
			return err
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Constant retries f every t.
func Constant(ctx context.Context, t time.Duration, f RetryFunc) error {
	return Do(ctx, NewConstant(t), f)
}

// NewConstant waits t every time.
func NewConstant(t time.Duration) Backoff {
	return BackoffFunc(func() (time.Duration, bool) { return t, false })
}

// NewExponential doubles from base.
func NewExponential(base time.Duration) Backoff {
	n := 0
	return BackoffFunc(func() (time.Duration, bool) { n++; return base << n, false })
}

// WithMaxRetries stops after max retries.
func WithMaxRetries(max uint64, next Backoff) Backoff {
	var n uint64
	return BackoffFunc(func() (time.Duration, bool) {
		if n >= max {
			return 0, true
		}
		n++
		return next.Next()
	})
}

// WithJitterPercent adds up to j percent either way.
func WithJitterPercent(j uint64, next Backoff) Backoff {
	return BackoffFunc(func() (time.Duration, bool) {
		d, stop := next.Next()
		return d + time.Duration(rand.Int63n(int64(d)*int64(j)/100+1)), stop
	})
}

// WithJitter adds up to j either way.
func WithJitter(j time.Duration, next Backoff) Backoff {
	return BackoffFunc(func() (time.Duration, bool) {
		d, stop := next.Next()
		return d + time.Duration(rand.Int63n(int64(j)+1)), stop
	})
}
