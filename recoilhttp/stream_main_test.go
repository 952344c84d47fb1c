package recoilhttp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test in the package leaves a goroutine behind: the
// body wrappers start none, and their timers must not outlive Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
