package recoilhttp

import (
	"testing"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

// TestMain checks that no test in the package leaves a goroutine behind: the
// body wrappers start none, and their timers must not outlive Close.
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
