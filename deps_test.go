package recoil_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The core packages import the standard library only. (What the core module
// brings a user is measured from outside, in tools/internal/release.)
func TestCoreImportsStdlibOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	core := []string{".", "./backoff", "./budget", "./breaker", "./limit", "./hop", "./recoilhttp", "./idempotency"}
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, core...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/recoil-go/recoil":             true,
		"github.com/recoil-go/recoil/backoff":     true,
		"github.com/recoil-go/recoil/budget":      true,
		"github.com/recoil-go/recoil/breaker":     true,
		"github.com/recoil-go/recoil/limit":       true,
		"github.com/recoil-go/recoil/hop":         true,
		"github.com/recoil-go/recoil/recoilhttp":  true,
		"github.com/recoil-go/recoil/idempotency": true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !allowed[pkg] {
			t.Errorf("core package depends on %s, want the standard library only", pkg)
		}
	}
}
