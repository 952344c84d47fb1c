package recoilprom_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A recoilprom user builds no OpenTelemetry and no gRPC.
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"go.opentelemetry.io/", "google.golang.org/grpc"} {
			if strings.HasPrefix(dep, f) {
				t.Errorf("recoilprom depends on %s", dep)
			}
		}
	}
}
