package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnvetted(t *testing.T) {
	listed := "example.com/m/ok\t/w/m/ok\t\n" +
		"example.com/m/dep\t/w/m/dep\tgithub.com/x/y@v1: reading https://proxy/x: 403 Forbidden\n" +
		"example.com/m/broken\t/w/m/broken\tbroken.go:3:1: expected 'package'\n" +
		"example.com/m/crash\t/w/m/crash\t\n" +
		"example.com/m/crashdep\t/w/m/crashdep\t\n" +
		"example.com/m/usesonic\t/w/m/usesonic\t\tfmt example.com/sonic/rt\n" +
		"example.com/sonic/rt\t/mods/sonic/rt\t\t\n" +
		"fmt\t/usr/local/go/src/fmt\t\t\n" +
		"short line\n"
	problems := []string{
		"example.com/m/crash: /tmp/recoil-vet: exit status 1",
		"example.com/m/crashdep: could not import example.com/m/crash (no package vetx file)",
		"example.com/m/ok/sub: /tmp/recoil-vet: exit status 1",
	}
	broken := map[string]string{"example.com/sonic/rt": "stubs.go:33:22: undefined: GoMapIterator"}
	got := unvetted(listed, problems, broken)
	want := map[string]string{
		"/w/m/dep":       "not loaded: github.com/x/y@v1: reading https://proxy/x: 403 Forbidden",
		"/w/m/broken":    "not loaded: broken.go:3:1: expected 'package'",
		"/w/m/crash":     "not vetted: example.com/m/crash: /tmp/recoil-vet: exit status 1",
		"/w/m/usesonic":  "not compiled: example.com/sonic/rt: stubs.go:33:22: undefined: GoMapIterator",
		"/mods/sonic/rt": "not compiled: stubs.go:33:22: undefined: GoMapIterator",
	}
	if !maps.Equal(got, want) {
		t.Errorf("unvetted:\n got %q\nwant %q", got, want)
	}
}

// TestVetNotCompiled runs go vet on a module one of whose packages does
// not compile: the package that imports it is reported not vetted, with
// the compiler's error, and no compiler line is taken for a finding.
func TestVetNotCompiled(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":     "module example.com/m\n\ngo 1.22\n",
		"dep/dep.go": "package dep\n\nvar X = notDeclared\n",
		"a/a.go":     "package a\n\nimport \"example.com/m/dep\"\n\nvar Y = dep.X\n",
		"ok/ok.go":   "package ok\n\nfunc F() {}\n",
	}
	writeTree(t, dir, files)
	// a vet tool that answers go vet's questions and finds nothing
	tool := filepath.Join(dir, "tool")
	script := "#!/bin/sh\ncase \"$1\" in\n-V=full) echo \"tool version devel buildID=0123456789abcdef\";;\n-flags) echo '[]';;\nesac\nexit 0\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	fs, problems, skipped, err := vet(dir, tool, []string{"./a", "./ok"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 0 {
		t.Errorf("findings: %v, want none (the compiler's lines are not findings)", fs)
	}
	why := skipped[filepath.Join(dir, "a")]
	if !strings.HasPrefix(why, "not compiled: example.com/m/dep: ") || !strings.Contains(why, "notDeclared") {
		t.Errorf("a: %q, want not compiled through example.com/m/dep (problems %q)", why, problems)
	}
	if why, ok := skipped[filepath.Join(dir, "ok")]; ok {
		t.Errorf("ok: %q, want it vetted", why)
	}
}
