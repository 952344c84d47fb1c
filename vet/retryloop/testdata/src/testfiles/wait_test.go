package testfiles

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	ctx := context.Background()
	time.Sleep(time.Millisecond)
	_ = ctx
}
