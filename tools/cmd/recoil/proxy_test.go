package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// fakeProxy puts a recoil-proxy on PATH that prints its arguments, and a
// line on stderr, and exits with the status given as its first argument
// (0 when there is none), or prints a flag list for -h.
func fakeProxy(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake recoil-proxy is a shell script")
	}
	dir := t.TempDir()
	script := `#!/bin/sh
if [ "$1" = "-h" ]; then
	echo "usage: recoil proxy [-config FILE]"
	echo "  -config string"
	exit 0
fi
echo "args: $*"
echo "said on stderr" >&2
case "$1" in [0-9]*) exit "$1";; esac
exit 0
`
	if err := os.WriteFile(filepath.Join(dir, proxyBinary), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

func TestProxy(t *testing.T) {
	tests := []struct {
		name      string
		installed bool
		args      []string
		code      int
		stdout    []string
		stderr    []string
	}{
		{"runs it with the flags", true, []string{"proxy", "-config", "p.yaml"}, 0, []string{"args: -config p.yaml"}, []string{"said on stderr"}},
		{"passes its exit status on", true, []string{"proxy", "2", "-bogus"}, 2, []string{"args: 2 -bogus"}, nil},
		{"help lists its flags", true, []string{"help", "proxy"}, 0, []string{"usage: recoil proxy [flags]", "Flags of recoil-proxy", "  -config string"}, nil},
		{"missing: says how to install it", false, []string{"proxy"}, 1, nil, []string{"recoil-proxy is not installed", "go install ./proxy/cmd/recoil-proxy"}},
		{"missing: help still helps", false, []string{"proxy", "-h"}, 0, []string{"usage: recoil proxy [flags]", "go install ./proxy/cmd/recoil-proxy"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.installed {
				fakeProxy(t)
			} else {
				t.Setenv("PATH", t.TempDir())
			}
			runCLI(t.Context(), tt.args...).check(t, tt.args, tt.code, tt.stdout, tt.stderr)
		})
	}
}
