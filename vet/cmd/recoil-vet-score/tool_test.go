package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOwnTool checks that each run's copy of the tool runs as the tool
// does and hashes differently, so go vet cannot replay another run's
// cached results.
func TestOwnTool(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the copy is made executable by mode bits")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "tool")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho ran \"$@\"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := ownTool(script, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ownTool(script, dir)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("two runs share one copy: %s", a)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	orig, _ := os.ReadFile(script)
	if bytes.Equal(ab, bb) || !bytes.HasPrefix(ab, orig) || !bytes.HasPrefix(bb, orig) {
		t.Fatal("the copies should start with the tool and differ after it")
	}
	out, err := exec.Command(a, "-V=full").Output()
	if err != nil || !strings.Contains(string(out), "ran -V=full") {
		t.Fatalf("the copy does not run as the tool: %q, %v", out, err)
	}
	if _, err := ownTool(filepath.Join(dir, "missing"), dir); err == nil || !strings.Contains(err.Error(), "-vettool") {
		t.Fatalf("a missing tool: got %v, want a -vettool error", err)
	}
}
