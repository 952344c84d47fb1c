// Package strategy stands in for github.com/go-pkgz/repeater/strategy:
// the schedules a Repeater ticks on.
package strategy

import (
	"context"
	"math/rand"
	"time"
)

// Interface gives a Repeater its ticks; a closed channel ends the tries.
type Interface interface {
	Start(ctx context.Context) <-chan struct{}
}

// Once ticks once.
type Once struct{}

// Start ticks once.
func (Once) Start(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	close(ch)
	return ch
}

// FixedDelay ticks Repeats times (one if zero), Delay apart.
type FixedDelay struct {
	Repeats int
	Delay   time.Duration
}

// Start ticks on the fixed schedule.
func (s *FixedDelay) Start(ctx context.Context) <-chan struct{} {
	return tick(ctx, s.Repeats, func(int) time.Duration { return s.Delay })
}

// Backoff ticks Repeats times (one if zero), Duration times Factor^i
// apart, randomised only when Jitter is set.
type Backoff struct {
	Duration time.Duration
	Repeats  int
	Factor   float64
	Jitter   bool
}

// Start ticks on the exponential schedule.
func (b *Backoff) Start(ctx context.Context) <-chan struct{} {
	return tick(ctx, b.Repeats, func(i int) time.Duration {
		d := float64(b.Duration)
		for range i {
			d *= b.Factor
		}
		if b.Jitter {
			d = rand.Float64() * 2 * d
		}
		return time.Duration(d)
	})
}

func tick(ctx context.Context, n int, wait func(int) time.Duration) <-chan struct{} {
	if n == 0 {
		n = 1
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for i := range n {
			select {
			case <-ctx.Done():
				return
			case ch <- struct{}{}:
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait(i)):
			}
		}
	}()
	return ch
}
