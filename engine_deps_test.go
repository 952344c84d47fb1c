package recoil_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The boundary between the loop and its drivers runs one way: drivers
// import the engine, and the engine (package recoil) imports none of them,
// the hop protocol included — only the policy's own parts.
func TestEngineImportsNoDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/recoil-go/recoil":         true,
		"github.com/recoil-go/recoil/backoff": true,
		"github.com/recoil-go/recoil/budget":  true,
		"github.com/recoil-go/recoil/breaker": true,
		// What budget and breaker share (configuration errors, the window's
		// slices); no driver.
		"github.com/recoil-go/recoil/internal/config": true,
		"github.com/recoil-go/recoil/internal/window": true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !allowed[pkg] {
			t.Errorf("package recoil depends on %s, want only backoff, budget and breaker", pkg)
		}
	}
}
