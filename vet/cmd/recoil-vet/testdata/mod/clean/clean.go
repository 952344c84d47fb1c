// Package clean has nothing to find.
package clean

import (
	"context"
	"time"
)

// Wait waits d or until ctx is done.
func Wait(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
