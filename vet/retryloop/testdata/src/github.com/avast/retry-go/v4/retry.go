// Package retry is a stub of avast/retry-go: Do runs f up to Attempts
// times, waiting what the DelayType says on a timer in a select on the
// configured context (context.Background unless Context sets one).
package retry

import (
	"context"
	"math/rand"
	"time"
)

// Config is what the options set.
type Config struct {
	attempts  uint
	delay     time.Duration
	delayType DelayTypeFunc
	ctx       context.Context
}

// Option sets a Config field.
type Option func(*Config)

// DelayTypeFunc is the wait before attempt n.
type DelayTypeFunc func(n uint, err error, config *Config) time.Duration

// Attempts sets the number of attempts (0: until success).
func Attempts(n uint) Option { return func(c *Config) { c.attempts = n } }

// Delay sets the base delay.
func Delay(d time.Duration) Option { return func(c *Config) { c.delay = d } }

// MaxDelay caps the delay.
func MaxDelay(d time.Duration) Option { return func(c *Config) {} }

// DelayType sets the delay function.
func DelayType(f DelayTypeFunc) Option { return func(c *Config) { c.delayType = f } }

// Context sets the context the wait hears.
func Context(ctx context.Context) Option { return func(c *Config) { c.ctx = ctx } }

// RetryIf sets the classifier.
func RetryIf(f func(error) bool) Option { return func(c *Config) {} }

// BackOffDelay doubles the delay with each attempt.
func BackOffDelay(n uint, _ error, c *Config) time.Duration { return c.delay << n }

// FixedDelay waits the delay every time.
func FixedDelay(_ uint, _ error, c *Config) time.Duration { return c.delay }

// RandomDelay waits a random time.
func RandomDelay(_ uint, _ error, c *Config) time.Duration {
	return time.Duration(rand.Int63n(int64(c.delay) + 1))
}

// CombineDelay adds delays up.
func CombineDelay(fs ...DelayTypeFunc) DelayTypeFunc {
	return func(n uint, err error, c *Config) time.Duration {
		var d time.Duration
		for _, f := range fs {
			d += f(n, err, c)
		}
		return d
	}
}

// Do runs f until it succeeds or the attempts are spent.
func Do(f func() error, opts ...Option) error {
	c := &Config{attempts: 10, delay: 100 * time.Millisecond, delayType: CombineDelay(BackOffDelay, RandomDelay), ctx: context.Background()}
	for _, o := range opts {
		o(c)
	}
	var err error
	for n := uint(0); c.attempts == 0 || n < c.attempts; n++ {
		if err = f(); err == nil {
			return nil
		}
		select {
		case <-time.After(c.delayType(n, err, c)):
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
	return err
}

// UntilSucceeded retries until f succeeds.
func UntilSucceeded() Option { return func(c *Config) { c.attempts = 0 } }

// LastErrorOnly makes Do return the last error alone.
func LastErrorOnly(b bool) Option { return func(c *Config) {} }

type unrecoverable struct{ error }

// Unrecoverable wraps err so that Do stops.
func Unrecoverable(err error) error { return unrecoverable{err} }
