package testfiles

import (
	"context"
	"time"
)

// settle sleeps where a context is in scope; it is in a test file, so it
// is reported only with -testfiles.
func settle(ctx context.Context) {
	time.Sleep(time.Millisecond)
}
