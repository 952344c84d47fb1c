// Package retry is a stand-in for avast/retry-go's fifth version: a
// Retrier made with options runs the work.
package retry

import (
	"context"
	"math/rand"
	"time"
)

type core struct {
	attempts  uint
	delay     time.Duration
	delayType DelayTypeFunc
	ctx       context.Context
}

// Option sets a Retrier's behaviour.
type Option func(*core)

// DelayTypeFunc gives the wait before attempt n.
type DelayTypeFunc func(n uint, err error, c *core) time.Duration

// Attempts sets how many attempts; 0 tries until success.
func Attempts(n uint) Option { return func(c *core) { c.attempts = n } }

// Delay sets the base delay.
func Delay(d time.Duration) Option { return func(c *core) { c.delay = d } }

// DelayType sets how the delay grows.
func DelayType(f DelayTypeFunc) Option { return func(c *core) { c.delayType = f } }

// Context sets the context whose end stops the waits.
func Context(ctx context.Context) Option { return func(c *core) { c.ctx = ctx } }

// UntilSucceeded retries until the work succeeds.
func UntilSucceeded() Option { return func(c *core) { c.attempts = 0 } }

// BackOffDelay doubles the delay each attempt.
func BackOffDelay(n uint, _ error, c *core) time.Duration { return c.delay << n }

// RandomDelay waits a random time.
func RandomDelay(_ uint, _ error, c *core) time.Duration {
	return time.Duration(rand.Int63n(int64(c.delay) + 1))
}

// Retrier runs work with its options.
type Retrier struct{ c *core }

// New makes a Retrier.
func New(opts ...Option) *Retrier {
	c := &core{attempts: 10, delay: 100 * time.Millisecond, ctx: context.Background()}
	for _, o := range opts {
		o(c)
	}
	return &Retrier{c}
}

// Do runs work until it succeeds or the attempts run out.
func (r *Retrier) Do(work func() error) error {
	var err error
	for n := uint(0); r.c.attempts == 0 || n < r.c.attempts; n++ {
		if err = work(); err == nil {
			return nil
		}
		d := BackOffDelay(n, err, r.c) + RandomDelay(n, err, r.c)
		if r.c.delayType != nil {
			d = r.c.delayType(n, err, r.c)
		}
		select {
		case <-r.c.ctx.Done():
			return r.c.ctx.Err()
		case <-time.After(d):
		}
	}
	return err
}
