package recoil_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The core packages import the standard library only.
func TestCoreImportsStdlibOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	core := []string{".", "./backoff", "./budget", "./breaker", "./limit", "./hop", "./recoilhttp"}
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, core...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/recoil-go/recoil":            true,
		"github.com/recoil-go/recoil/backoff":    true,
		"github.com/recoil-go/recoil/budget":     true,
		"github.com/recoil-go/recoil/breaker":    true,
		"github.com/recoil-go/recoil/limit":      true,
		"github.com/recoil-go/recoil/hop":        true,
		"github.com/recoil-go/recoil/recoilhttp": true,
		// Shared by breaker, budget and limit, standard library only too.
		"github.com/recoil-go/recoil/internal/config": true,
		"github.com/recoil-go/recoil/internal/window": true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !allowed[pkg] {
			t.Errorf("core package depends on %s, want the standard library only", pkg)
		}
	}
}

// The observability adapters pull in only their own SDK: an HTTP user of
// recoilotel builds no gRPC and no Prometheus client, a recoilprom user no
// OpenTelemetry.
func TestAdapterImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{"./recoilotel", []string{"google.golang.org/grpc", "github.com/prometheus/"}},
		{"./recoilprom", []string{"go.opentelemetry.io/", "google.golang.org/grpc"}},
	}
	for _, tt := range tests {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", tt.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", tt.pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range tt.forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", tt.pkg, dep)
				}
			}
		}
	}
}
