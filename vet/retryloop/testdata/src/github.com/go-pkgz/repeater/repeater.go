// Package repeater stands in for github.com/go-pkgz/repeater (v1): Do
// calls a function until it returns nil, paced by a strategy's ticks, and
// stops at once on one of the errors it is handed.
package repeater

import (
	"context"
	"errors"
	"time"

	"github.com/go-pkgz/repeater/strategy"
)

// Repeater runs a function on a strategy's schedule.
type Repeater struct {
	strategy.Interface
}

// New makes a Repeater; a nil strategy means ten tries five seconds apart.
func New(s strategy.Interface) *Repeater {
	if s == nil {
		s = &strategy.FixedDelay{Repeats: 10, Delay: 5 * time.Second}
	}
	return &Repeater{Interface: s}
}

// NewDefault makes a Repeater with a fixed delay.
func NewDefault(repeats int, delay time.Duration) *Repeater {
	return New(&strategy.FixedDelay{Repeats: repeats, Delay: delay})
}

// Do calls fun on each tick until it returns nil, the ticks end, ctx ends
// or fun returns one of errs.
func (r Repeater) Do(ctx context.Context, fun func() error, errs ...error) (err error) {
	ticks := r.Start(ctx)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-ticks:
			if !ok {
				return err
			}
			if err = fun(); err == nil {
				return nil
			}
			for _, e := range errs {
				if errors.Is(err, e) {
					return err
				}
			}
		}
	}
}
