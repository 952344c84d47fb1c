package recoilotel_test

import (
	"testing"

	"github.com/recoil-go/recoil/internal/depcheck"
)

// An HTTP user of recoilotel builds no gRPC and no Prometheus client: the
// gRPC part is package grpcotel. Nor a Redis client: Metrics.Fleet takes a
// fleet client through an interface.
func TestImports(t *testing.T) {
	depcheck.Forbid(t, ".", "google.golang.org/grpc", "github.com/prometheus/", "github.com/recoil-go/recoil/fleet", "github.com/redis/")
}
