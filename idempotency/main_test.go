package idempotency_test

import (
	"testing"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
