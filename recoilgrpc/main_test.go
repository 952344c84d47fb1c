package recoilgrpc_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Streams start a goroutine each; servers and connections start more.
// None may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
