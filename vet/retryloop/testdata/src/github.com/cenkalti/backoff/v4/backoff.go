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
