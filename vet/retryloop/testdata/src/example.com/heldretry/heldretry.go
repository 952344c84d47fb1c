// Package heldretry is a stand-in, written anew, for a project's own retry
// package whose Retry keeps the Backoff policy its constructor is handed
// and waits what that policy says before each round (for r.WaitNext(ctx),
// or r.Do(ctx, op)): the caller chooses the schedule by the policy it
// builds.
package heldretry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff says how long to wait before the next round.
type Backoff interface {
	Next() time.Duration
}

type steady struct{ every time.Duration }

// Steady returns a Backoff that waits d every round.
func Steady(d time.Duration) Backoff { return &steady{every: d} }

func (s *steady) Next() time.Duration { return s.every }

type spread struct {
	base, ceiling time.Duration
	rounds        int
}

// Spread returns a Backoff that waits a random time up to an exponential
// ceiling (full jitter).
func Spread(base, ceiling time.Duration) Backoff { return &spread{base: base, ceiling: ceiling} }

func (s *spread) Next() time.Duration {
	s.rounds++
	return rand.N(min(s.ceiling, s.base<<s.rounds) + 1)
}

// Retry paces a caller's loop with the policy it was built with.
type Retry interface {
	WaitNext(ctx context.Context) bool
	Do(ctx context.Context, op func() (any, error)) (any, error)
}

type retry struct {
	max, rounds int
	policy      Backoff
}

// NewRetry returns a Retry of at most max rounds that waits what b says.
func NewRetry(max int, b Backoff) Retry { return &retry{max: max, policy: b} }

// WaitNext waits before every round but the first and reports whether
// another may run.
func (r *retry) WaitNext(ctx context.Context) bool {
	defer func() { r.rounds++ }()
	if r.rounds >= r.max {
		return false
	}
	if r.rounds == 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(r.policy.Next())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Do runs op until it succeeds or the rounds run out.
func (r *retry) Do(ctx context.Context, op func() (any, error)) (any, error) {
	var err error
	for r.WaitNext(ctx) {
		var v any
		if v, err = op(); err == nil {
			return v, nil
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	return nil, err
}
