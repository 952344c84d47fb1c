package recoilotel_test

import (
	"testing"

	"github.com/recoil-go/recoil/internal/depcheck"
)

// An HTTP user of recoilotel builds no gRPC and no Prometheus client: the
// gRPC part is package grpcotel.
func TestImports(t *testing.T) {
	depcheck.Forbid(t, ".", "google.golang.org/grpc", "github.com/prometheus/")
}
