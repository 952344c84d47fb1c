package recoilprom_test

import (
	"testing"

	"github.com/recoil-go/recoil/internal/depcheck"
)

// A recoilprom user builds no OpenTelemetry and no gRPC.
func TestImports(t *testing.T) {
	depcheck.Forbid(t, ".", "go.opentelemetry.io/", "google.golang.org/grpc")
}
