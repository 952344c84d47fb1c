// Package wait is a stub of apimachinery's wait: a Backoff whose Step
// grows the duration by Factor and adds up to Jitter of it at random.
package wait

import (
	"context"
	"math/rand"
	"time"
)

// Backoff is a schedule: Duration grown by Factor for Steps steps, each
// randomised by up to Jitter of itself.
type Backoff struct {
	Duration time.Duration
	Factor   float64
	Jitter   float64
	Steps    int
	Cap      time.Duration
}

// Step returns the next wait.
func (b *Backoff) Step() time.Duration {
	d := b.Duration
	b.Duration = time.Duration(float64(b.Duration) * b.Factor)
	b.Steps--
	if b.Jitter > 0 {
		d += time.Duration(rand.Float64() * b.Jitter * float64(d))
	}
	return d
}

// ConditionFunc says whether it is done.
type ConditionFunc func() (bool, error)

// runCondition runs a condition, a panic in it becoming an error, as
// apimachinery's own does.
func runCondition(condition ConditionFunc) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = context.Canceled
		}
	}()
	return condition()
}

// ExponentialBackoff repeats condition until done, sleeping between.
func ExponentialBackoff(backoff Backoff, condition ConditionFunc) error {
	for backoff.Steps > 0 {
		if ok, err := runCondition(condition); err != nil || ok {
			return err
		}
		if backoff.Steps == 1 {
			break // the last try: no wait after it
		}
		time.Sleep(backoff.Step())
	}
	return context.DeadlineExceeded
}

// ConditionWithContextFunc says whether it is done, given a context.
type ConditionWithContextFunc func(context.Context) (bool, error)

// ExponentialBackoffWithContext repeats condition until done, waiting
// between in a select on ctx.
func ExponentialBackoffWithContext(ctx context.Context, backoff Backoff, condition ConditionWithContextFunc) error {
	for backoff.Steps > 0 {
		if ok, err := condition(ctx); err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff.Step()):
		}
	}
	return context.DeadlineExceeded
}

// Jitter returns d plus up to maxFactor of it at random.
func Jitter(d time.Duration, maxFactor float64) time.Duration {
	return d + time.Duration(rand.Float64()*maxFactor*float64(d))
}

// PollUntilContextTimeout asks condition every interval until it is done,
// ctx is done or timeout passes.
func PollUntilContextTimeout(ctx context.Context, interval, timeout time.Duration, immediate bool, condition ConditionWithContextFunc) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return PollUntilContextCancel(ctx, interval, immediate, condition)
}

// PollUntilContextCancel asks condition every interval until it is done
// or ctx is.
func PollUntilContextCancel(ctx context.Context, interval time.Duration, immediate bool, condition ConditionWithContextFunc) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for first := immediate; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
		if ok, err := condition(ctx); err != nil || ok {
			return err
		}
	}
}

// PollImmediate asks condition now and every interval until it is done
// or timeout passes, on a context of its own.
func PollImmediate(interval, timeout time.Duration, condition ConditionFunc) error {
	return PollUntilContextTimeout(context.Background(), interval, timeout, true, func(context.Context) (bool, error) { return condition() })
}
