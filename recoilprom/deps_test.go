package recoilprom_test

import (
	"testing"

	"github.com/recoil-go/recoil/internal/depcheck"
)

// A recoilprom user builds no OpenTelemetry and no gRPC, and no Redis
// client: Metrics.Fleet takes a fleet client through an interface.
func TestImports(t *testing.T) {
	depcheck.Forbid(t, ".", "go.opentelemetry.io/", "google.golang.org/grpc", "github.com/recoil-go/recoil/fleet", "github.com/redis/")
}
