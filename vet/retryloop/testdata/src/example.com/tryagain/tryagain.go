// Package tryagain is a stand-in for a small retry library whose plain
// entry point runs its context-taking one on context.Background(): its
// waits hear that context, which no caller's reaches.
package tryagain

import (
	"context"
	"time"
)

// Retry calls fn up to n times, interval apart.
func Retry(n uint, interval time.Duration, fn func() error) error {
	return WithContext(context.Background(), n, interval, fn)
}

// WithContext is Retry that stops when ctx is done.
func WithContext(ctx context.Context, n uint, interval time.Duration, fn func() error) (err error) {
	for n > 0 {
		n--
		if err = fn(); err == nil || n == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return err
}
