package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binDir    string
	bin       string
	buildErr  []byte
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// build compiles recoil-vet once for every test, or skips the test if
// there is no go command.
func build(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command: cannot build recoil-vet")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "recoil-vet-test")
		if err != nil {
			buildErr = []byte(err.Error())
			return
		}
		binDir = dir
		out := filepath.Join(dir, "recoil-vet")
		if b, err := exec.Command(goCmd, "build", "-o", out, ".").CombinedOutput(); err != nil {
			buildErr = append([]byte(err.Error()+"\n"), b...)
			return
		}
		bin = out
	})
	if bin == "" {
		t.Fatalf("go build: %s", buildErr)
	}
	return bin
}

// sameRace returns the -race flag if this test binary was built with it.
// go vet given it type-checks the fixture against the packages compiled
// for the test binary (the standard library under -race) instead of
// compiling them all again without it. recoil-vet itself is built without
// it: it computes facts for every package the fixture imports, which the
// race detector's instrumentation would make ten times slower whenever the
// analyzer has changed since the last run.
func sameRace() []string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return []string{"-race"}
			}
		}
	}
	return nil
}

// fixture copies the test module into a temporary directory and returns
// it. Its go.mod is kept as go.mod.txt, so that nothing that walks the
// repository for modules (a go.work, a vet of every module) takes the
// fixture for one of recoil's.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir("testdata/mod", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/mod", path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, strings.TrimSuffix(rel, ".txt")), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runIn runs a command in the test module, its own module (no workspace).
func runIn(t *testing.T, dir string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out.String(), code
}

// TestModes runs the built binary both ways on both packages at once: by
// go vet -vettool (vet's unitchecker protocol, a .cfg file per package) and
// standalone with package patterns. Both find the same three findings in
// flaky and none in clean, and neither reports the ignored sleep. The
// standalone mode type-checks net/http from source, so it runs only with
// RECOIL_LONG=1; the unit protocol it shares with go vet is the same
// analyzer either way.
func TestModes(t *testing.T) {
	bin := build(t)
	mod := fixture(t)
	want := []string{"flaky.go:12:2: unclassified:", "flaky.go:17:3: deafwait:", "flaky.go:17:3: nojitter:"}
	tests := []struct {
		name string
		cmd  string
		args []string
		long bool
	}{
		{"vet", "go", append(append([]string{"vet"}, sameRace()...), "-vettool="+bin), false},
		{"standalone", bin, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.long && os.Getenv("RECOIL_LONG") == "" {
				t.Skip("type-checks net/http from source; set RECOIL_LONG=1 to run")
			}
			out, code := runIn(t, mod, tt.cmd, append(tt.args, "./flaky", "./clean")...)
			if code == 0 {
				t.Fatalf("exit 0, want failure; output:\n%s", out)
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "clean.go") {
				t.Errorf("a finding in clean:\n%s", out)
			}
			if n := strings.Count(out, ": deafwait:"); n > 1 {
				t.Errorf("%d deafwait findings, want 1 (the ignored sleep must stay quiet):\n%s", n, out)
			}
		})
	}
}

// TestBadInput: an unknown flag and a pattern that matches nothing fail
// with a message, not a panic.
func TestBadInput(t *testing.T) {
	bin := build(t)
	mod := fixture(t)
	for _, args := range [][]string{{"-nosuchflag", "./..."}, {"./nosuchdir"}, {}} {
		out, code := runIn(t, mod, bin, args...)
		if code == 0 {
			t.Errorf("recoil-vet %v: exit 0, want failure; output:\n%s", args, out)
		}
		if strings.Contains(out, "panic:") {
			t.Errorf("recoil-vet %v panicked:\n%s", args, out)
		}
	}
}
