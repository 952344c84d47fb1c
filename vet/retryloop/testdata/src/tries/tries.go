// want package:"offline"

// Package tries is a small backoff written anew for the tests: a loop
// goes on while Ongoing says so.
package tries

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff counts a loop's tries against a maximum and hears a context.
type Backoff struct {
	ctx   context.Context
	max   int
	tries int
	slow  bool
}

// New returns a Backoff of max tries on ctx.
func New(ctx context.Context, max int) *Backoff { return &Backoff{ctx: ctx, max: max} }

// Ongoing reports whether the loop may try again.
func (b *Backoff) Ongoing() bool { // want Ongoing:`bounds`
	return b.ctx.Err() == nil && (b.max == 0 || b.tries < b.max)
}

// Slow reports whether the last wait was a long one: no bound.
func (b *Backoff) Slow() bool { return b.slow }

// Wait sleeps a random time that grows with the tries, or until ctx ends.
func (b *Backoff) Wait() { // want Wait:`waits=true`
	b.tries++
	d := rand.N(time.Duration(b.tries) * 100 * time.Millisecond)
	b.slow = d > time.Second
	select {
	case <-b.ctx.Done():
	case <-time.After(d):
	}
}
