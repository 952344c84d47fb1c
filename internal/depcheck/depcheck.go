// Package depcheck lists what packages import, for tests that hold a
// package to the imports its module promises (the core to the standard
// library, the engine to no driver, an adapter to its own SDK).
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Deps returns every package outside the standard library that pkgs
// (patterns, as the go command takes them, relative to the test's
// directory) import directly or indirectly, themselves included. It skips
// the test under -short, as it runs the go command.
func Deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return strings.Fields(string(out))
}

// Forbid fails t for each package pkg depends on whose path begins with one
// of prefixes.
func Forbid(t *testing.T, pkg string, prefixes ...string) {
	t.Helper()
	for _, dep := range Deps(t, pkg) {
		for _, p := range prefixes {
			if strings.HasPrefix(dep, p) {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
