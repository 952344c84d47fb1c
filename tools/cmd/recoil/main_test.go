package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// cli is what one run of the command did.
type cli struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runCLI runs "recoil args…" with ctx and returns what it did.
func runCLI(ctx context.Context, args ...string) cli {
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, args, &stdout, &stderr)
	return cli{code, stdout.String(), stderr.String(), time.Since(start)}
}

// check reports where c differs from the exit status and the fragments of
// stdout and stderr wanted.
func (c cli) check(t *testing.T, args []string, code int, stdout, stderr []string) {
	t.Helper()
	if c.code != code {
		t.Errorf("recoil %q: exit %d, want %d; stderr:\n%s", args, c.code, code, c.stderr)
	}
	for _, w := range stdout {
		if !strings.Contains(c.stdout, w) {
			t.Errorf("recoil %q: stdout lacks %q:\n%s", args, w, c.stdout)
		}
	}
	for _, w := range stderr {
		if !strings.Contains(c.stderr, w) {
			t.Errorf("recoil %q: stderr lacks %q:\n%s", args, w, c.stderr)
		}
	}
}

// usageErr checks a usage error: exit 2, the message on stderr, nothing on
// stdout (no work was done), and at once.
func (c cli) usageErr(t *testing.T, args []string, msg string) {
	t.Helper()
	c.check(t, args, exitUsage, nil, []string{msg})
	if c.stdout != "" {
		t.Errorf("recoil %q: a usage error, yet stdout:\n%s", args, c.stdout)
	}
	if c.took > 2*time.Second {
		t.Errorf("recoil %q: a usage error took %v; flags are checked before any work", args, c.took)
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  []string
	}{
		{"no command: usage on stderr", nil, 2, nil, []string{"usage: recoil <command>", "demo", "Exit status"}},
		{"help", []string{"help"}, 0, []string{"usage: recoil <command>", "  demo ", "  version "}, nil},
		{"-h", []string{"-h"}, 0, []string{"usage: recoil <command>"}, nil},
		{"--help", []string{"--help"}, 0, []string{"usage: recoil <command>"}, nil},
		{"help of an unknown command", []string{"help", "frobnicate"}, 2, nil, []string{`unknown command "frobnicate"`}},
		{"help with two commands", []string{"help", "sim", "load"}, 2, nil, []string{`unexpected argument "load"`}},
		{"unknown command", []string{"frobnicate"}, 2, nil, []string{`unknown command "frobnicate"`, "usage: recoil"}},
		{"bad flag", []string{"demo", "-nope"}, 2, nil, []string{"flag provided but not defined: -nope", `Run "recoil help demo"`}},
		{"stray argument", []string{"demo", "extra"}, 2, nil, []string{`unexpected argument "extra"`}},
		{"version", []string{"version"}, 0, []string{"recoil ", "go1."}, nil},
		{"-version", []string{"-version"}, 0, []string{"recoil ", "go1."}, nil},
		{"--version", []string{"--version"}, 0, []string{"recoil ", "go1."}, nil},
		{"version takes no argument", []string{"version", "now"}, 2, nil, []string{`unexpected argument "now"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runCLI(t.Context(), tt.args...)
			c.check(t, tt.args, tt.wantCode, tt.wantOut, tt.wantErr)
			if tt.wantCode == 0 && c.stderr != "" {
				t.Errorf("recoil %q: stderr = %q, want nothing", tt.args, c.stderr)
			}
		})
	}
}

// seedRef matches a reference to a document outside the repository.
var seedRef = regexp.MustCompile(`(?i)seeds? 0\d\d`)

// Every way of asking for a command's help prints the same text on stdout:
// what the command does, its flags, examples and its exit statuses.
// helpFaults matches what a help text must not show: a Flags heading with
// no flag under it, "(default x) (default x)", a placeholder like NAME/.
var helpFaults = regexp.MustCompile(`Flags:\n\n|\(default [^)]*\) \(default|\n  -[a-z-]+ [A-Z]+/\n`)

func TestHelp(t *testing.T) {
	top := runCLI(t.Context(), "help")
	if seedRef.MatchString(top.stdout) {
		t.Errorf("recoil help cites a document outside the repository: %q", seedRef.FindString(top.stdout))
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			first := runCLI(t.Context(), "help", c.name)
			want := []string{"usage: recoil " + c.name, "\nExamples:\n  recoil " + c.name, "\nExit status: "}
			first.check(t, []string{"help", c.name}, 0, want, nil)
			for _, bad := range helpFaults.FindAllString(first.stdout, -1) {
				t.Errorf("recoil help %s: %q (an empty Flags section, a default said twice, or a placeholder that is not a word)", c.name, bad)
			}
			if first.stderr != "" {
				t.Errorf("recoil help %s: stderr = %q, want nothing", c.name, first.stderr)
			}
			if m := seedRef.FindString(first.stdout); m != "" {
				t.Errorf("recoil help %s cites a document outside the repository: %q", c.name, m)
			}
			for _, h := range []string{"-h", "-help", "--help"} {
				got := runCLI(t.Context(), c.name, h)
				if got.code != 0 || got.stdout != first.stdout || got.stderr != "" {
					t.Errorf("recoil %s %s: exit %d, stderr %q, and stdout %s the help's", c.name, h, got.code, got.stderr,
						map[bool]string{true: "equal to", false: "unlike"}[got.stdout == first.stdout])
				}
			}
		})
	}
}

func TestVersionText(t *testing.T) {
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build information", nil, "recoil (devel)\ngo1.26 linux/amd64\n"},
		{"a source tree", &debug.BuildInfo{Main: debug.Module{Path: "github.com/recoil-go/recoil", Version: "(devel)"}},
			"recoil (devel)\ngo1.26 linux/amd64\n"},
		{"a release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "recoil v1.2.3\ngo1.26 linux/amd64\n"},
		{"a revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "871d273"}, {Key: "vcs.modified", Value: "false"}}},
			"recoil (devel)\nrevision 871d273\ngo1.26 linux/amd64\n"},
		{"a modified tree", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130-871d273+dirty"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "871d273"}, {Key: "vcs.modified", Value: "true"}}},
			"recoil v0.0.0-20261130-871d273+dirty\nrevision 871d273 (with uncommitted changes)\ngo1.26 linux/amd64\n"},
	}
	for _, tt := range tests {
		if got := versionText(tt.bi, "go1.26", "linux/amd64"); got != tt.want {
			t.Errorf("%s: versionText = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// stopBound bounds, in the Ctrl-C tests, how long a command may take to
// return after its interrupt. On an idle machine each stops within a
// second; under -race on a machine busy with other work, cutting off and
// unwinding its callers and servers takes seconds of the machine's time
// that the command does not control. What the tests are there to catch
// does not hang on the bound's tightness: a command that missed the
// interrupt runs on for an hour or more in the gateway, load and sim
// tests, and measures the rows after it in the demo's; and a wait the
// interrupt should have shortened (gateway.ShutdownTimeout, statsWait) is
// 5 s, which the bound does not admit.
const stopBound = 5 * time.Second

// cancelOn is a writer that keeps what is written and cancels a context
// the first time the text written so far contains a marker; it records
// when it did.
type cancelOn struct {
	mu       sync.Mutex
	buf      strings.Builder
	marker   string
	cancel   context.CancelFunc
	canceled time.Time
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.canceled.IsZero() && strings.Contains(w.buf.String(), w.marker) {
		w.canceled = time.Now()
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelOn) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// since returns how long ago the context was cancelled, or -1 if it was
// not.
func (w *cancelOn) since() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.canceled.IsZero() {
		return -1
	}
	return time.Since(w.canceled)
}

// fakeTerminal makes the commands take any writer for a terminal, so that
// they show progress, for the rest of the test.
func fakeTerminal(t *testing.T) {
	old := terminal
	terminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { terminal = old })
}
