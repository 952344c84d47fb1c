// Package backoff is a stub of cenkalti/backoff's first major version as
// gopkg.in serves it: a jittered exponential backoff whose Retry waits on
// a timer no context stops.
package backoff

import (
	"math/rand"
	"time"
)

// BackOff says how long to wait before the next try.
type BackOff interface {
	NextBackOff() time.Duration
	Reset()
}

// Stop ends the retries.
const Stop time.Duration = -1

// ExponentialBackOff doubles, randomised by half.
type ExponentialBackOff struct{ current time.Duration }

// NewExponentialBackOff starts at half a second.
func NewExponentialBackOff() *ExponentialBackOff {
	return &ExponentialBackOff{current: 500 * time.Millisecond}
}

// NextBackOff returns the next randomised wait.
func (b *ExponentialBackOff) NextBackOff() time.Duration {
	d := b.current/2 + time.Duration(rand.Int63n(int64(b.current)))
	b.current *= 2
	return d
}

// Reset starts again.
func (b *ExponentialBackOff) Reset() { b.current = 500 * time.Millisecond }

// Operation is one try.
type Operation func() error

// Notify is told of each error before the wait.
type Notify func(error, time.Duration)

// RetryNotify runs op until it succeeds or b stops.
func RetryNotify(op Operation, b BackOff, notify Notify) error {
	for {
		err := op()
		if err == nil {
			return nil
		}
		d := b.NextBackOff()
		if d == Stop {
			return err
		}
		if notify != nil {
			notify(err, d)
		}
		t := time.NewTimer(d)
		<-t.C
	}
}
