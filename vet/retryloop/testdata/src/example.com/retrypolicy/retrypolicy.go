// Package retrypolicy stands in for a generated SDK's retry runtime: the
// loop asks it whether to go on, handing it a context that carries the
// attempts made so far.
package retrypolicy

import (
	"math/rand/v2"
	"time"
)

// Options are the user's retry settings.
type Options struct {
	Retryable bool
	Max       int
}

// Context is what the loop tells the policy each round.
type Context struct {
	Attempts int
	Err      error
}

// ShouldRetry says whether to try (again): the first time always, then
// while the options allow.
func ShouldRetry(o *Options, c *Context) bool {
	return c.Attempts == 0 || (o != nil && o.Retryable && c.Attempts < o.Max)
}

// Delay is a jittered wait before the next attempt.
func Delay(c *Context) time.Duration {
	if c.Attempts == 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(100 * time.Millisecond << c.Attempts)))
}
