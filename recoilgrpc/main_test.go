package recoilgrpc_test

import (
	"testing"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

// Streams start a goroutine each; servers and connections start more.
// None may outlive the tests.
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
