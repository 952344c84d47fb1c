package testfiles

import (
	"context"
	"testing"
	"time"
)

func settle(ctx context.Context) {
	time.Sleep(time.Millisecond)
}

func TestSleep(t *testing.T) {
	settle(t.Context())
}
