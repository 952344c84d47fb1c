package recoilotel_test

import (
	"os/exec"
	"strings"
	"testing"
)

// An HTTP user of recoilotel builds no gRPC and no Prometheus client: the
// gRPC part is package grpcotel.
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"google.golang.org/grpc", "github.com/prometheus/"} {
			if strings.HasPrefix(dep, f) {
				t.Errorf("recoilotel depends on %s", dep)
			}
		}
	}
}
