// want package:"offline"

// Package optctors holds, written anew, backoffs made by constructors that
// take options after their durations: the durations are still the
// caller's, one value for every retry.
package optctors

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoffer doubles its wait from base up to max.
type Backoffer struct {
	base, max    time.Duration
	next         time.Duration
	logEvery     time.Duration
	sinceLog     time.Duration
	spread       bool
	retryable    func(error) bool
	attempts     int
	currentTotal time.Duration
}

// Option sets an optional field.
type Option func(*Backoffer)

// WithLogEvery sets how often a failure is logged.
func WithLogEvery(d time.Duration) Option { return func(b *Backoffer) { b.logEvery = d } }

// New makes a Backoffer; options come after the durations.
func New(base, max time.Duration, opts ...Option) *Backoffer {
	b := &Backoffer{base: base, max: max, next: base}
	for _, o := range opts {
		o(b)
	}
	return b
}

func (b *Backoffer) interval() time.Duration {
	d := b.next
	b.next = min(b.next*2, b.max)
	return d
}

// Exec runs fn until it succeeds or fails for good, doubling the wait.
//
// case: flag nojitter
func (b *Backoffer) Exec(ctx context.Context, fn func() error) error { // want Exec:`jitter=1 .*bydefault=true libwork=2`
	defer func() { b.next = b.base }()
	var t *time.Timer
	for {
		err := fn()
		if err == nil || (b.retryable != nil && !b.retryable(err)) {
			return err
		}
		d := b.interval()
		b.sinceLog += d
		if t == nil {
			t = time.NewTimer(d) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		} else {
			t.Reset(d) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ExecSpread is Exec with each wait drawn at random below the doubled
// interval.
//
// case: clean
func (b *Backoffer) ExecSpread(ctx context.Context, fn func() error) error { // want ExecSpread:`jitter=2`
	defer func() { b.next = b.base }()
	for {
		err := fn()
		if err == nil {
			return nil
		}
		d := time.Duration(rand.Int64N(int64(b.interval()) + 1))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}
