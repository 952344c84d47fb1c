package recoil_test

import (
	"strings"
	"testing"

	"github.com/recoil-go/recoil/internal/depcheck"
)

const mod = "github.com/recoil-go/recoil"

// The core packages import the standard library only. (What the core module
// brings a user is measured from outside, in tools/internal/release.)
func TestCoreImportsStdlibOnly(t *testing.T) {
	core := []string{".", "./backoff", "./budget", "./breaker", "./limit", "./hop", "./recoilhttp", "./idempotency"}
	for _, pkg := range depcheck.Deps(t, core...) {
		if pkg != mod && !strings.HasPrefix(pkg, mod+"/") {
			t.Errorf("a core package depends on %s, want the standard library only", pkg)
		}
	}
}

// The boundary between the loop and its drivers runs one way: drivers
// import the engine, and the engine (package recoil) imports none of them,
// the hop protocol included — only the policy's own parts.
func TestEngineImportsNoDriver(t *testing.T) {
	allowed := map[string]bool{
		mod:              true,
		mod + "/backoff": true,
		mod + "/budget":  true,
		mod + "/breaker": true,
		// What budget and breaker share (configuration errors, the window's
		// slices); no driver.
		mod + "/internal/config": true,
		mod + "/internal/window": true,
		// The priority type the engine and the limiters share.
		mod + "/internal/priority": true,
		// The pacing budget's Rate and the fleet's local share share.
		mod + "/internal/pace": true,
	}
	for _, pkg := range depcheck.Deps(t, ".") {
		if !allowed[pkg] {
			t.Errorf("package recoil depends on %s, want only backoff, budget and breaker", pkg)
		}
	}
}
