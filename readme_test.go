package recoil_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestReadmeQuickStart builds the README's quick start exactly as it is
// written: each Go block of the section, a program of its own, in a module
// that requires the core from this checkout. The core requires nothing, so
// the build needs no network (GOPROXY=off) and no go.work.
func TestReadmeQuickStart(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := quickStartBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatal(`README.md: no Go block under "## Quick start"`)
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for i, src := range blocks {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "go.mod"), "module readme\n\ngo 1.26\n\nrequire github.com/recoil-go/recoil v0.0.0\n\n"+
			"replace github.com/recoil-go/recoil => "+root+"\n")
		write(t, filepath.Join(dir, "main.go"), src)
		// Built and vetted as the test binary was (-race or not), the
		// block's dependencies come from the build cache this test run
		// filled, instead of being compiled a second time in the other mode.
		race := sameRace()
		for _, args := range [][]string{
			append(append([]string{"build"}, race...), "-o", os.DevNull, "."),
			append(append([]string{"vet"}, race...), "."),
		} {
			cmd := exec.Command(goCmd, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=mod")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("README.md quick start, Go block %d: go %s: %v\n%s", i+1, strings.Join(args, " "), err, out)
			}
		}
	}
}

// sameRace returns the -race flag if this test binary was built with it,
// so that a go command the test runs reuses the packages already compiled
// for it rather than compiling every dependency again without it.
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

// quickStartBlocks returns the text of each ```go block in the README's
// "## Quick start" section, as written.
func quickStartBlocks(readme string) []string {
	_, section, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		return nil
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks []string
	for {
		_, rest, ok := strings.Cut(section, "\n```go\n")
		if !ok {
			return blocks
		}
		block, after, ok := strings.Cut(rest, "\n```\n")
		if !ok {
			return append(blocks, rest) // an unclosed block: let the build say so
		}
		blocks = append(blocks, block+"\n")
		section = after
	}
}

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
