// Package retrynext stands in for a project's own retry package: a Retry
// interface whose one implementation waits a jittered time before each
// round, hearing the context, until its count runs out.
package retrynext

import (
	"context"
	"math/rand/v2"
	"time"
)

// Retry paces a caller's loop: for r.WaitNext(ctx) { … }.
type Retry interface {
	WaitNext(ctx context.Context) bool
	Calls() int
}

type retry struct {
	max, calls int
	base       time.Duration
}

// NewRetry returns a Retry of at most max rounds.
func NewRetry(max int) Retry { return &retry{max: max, base: time.Second} }

// WaitNext waits before every round but the first and reports whether
// another may run.
func (r *retry) WaitNext(ctx context.Context) bool {
	defer func() { r.calls++ }()
	if r.calls >= r.max {
		return false
	}
	if r.calls == 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(rand.N(r.base << r.calls))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Calls is the number of rounds asked for.
func (r *retry) Calls() int { return r.calls }
