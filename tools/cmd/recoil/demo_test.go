package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	gwNoLeaks(t)
	chart := filepath.Join(t.TempDir(), "demo.svg")
	args := []string{"demo", "-callers", "3", "-outage", "300ms", "-runs", "1", "-o", chart}
	c := runCLI(t.Context(), args...)
	c.check(t, args, 0, []string{
		"peak/200ms", "begun again", "measured", "simulated",
		"3 callers, full-jitter against immediate: attempts ÷",
		"3 callers, default against immediate",
	}, []string{"chart written to " + chart})
	if data, err := os.ReadFile(chart); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("chart %.40q, %v; want an SVG", data, err)
	}
}

// Every flag is checked before a gateway starts: a mistake costs nothing
// and leaves no file.
func TestDemoUsageErrors(t *testing.T) {
	gwNoLeaks(t)
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-callers", "4,x"}, `-callers "4,x": want numbers from 1 to 10000`},
		{[]string{"-callers", "0"}, `-callers "0": want numbers from 1 to 10000`},
		{[]string{"-callers", "20000"}, `-callers "20000": want numbers from 1 to 10000`},
		{[]string{"-callers", "4,4"}, `-callers "4,4": 4 is listed twice`},
		{[]string{"-outage", "-1s"}, "-outage -1s: must be more than 0s and at most 1m0s"},
		{[]string{"-outage", "0s"}, "-outage 0s: must be more than 0s"},
		{[]string{"-outage", "2m"}, "-outage 2m0s: must be more than 0s and at most 1m0s"},
		{[]string{"-seed", "0"}, "-seed 0: must be 1 or more (leave the flag out for its default)"},
		{[]string{"-runs", "0"}, "-runs 0: must be from 1 to 100"},
		{[]string{"-runs", "101"}, "-runs 101: must be from 1 to 100"},
		{[]string{"-o", filepath.Join(dir, "chart.gif")}, "a chart's name ends in .svg or .png"},
		{[]string{"-o", filepath.Join(dir, "none", "chart.svg")}, "none: does not exist"},
	}
	for _, tt := range tests {
		args := append([]string{"demo"}, tt.args...)
		c := runCLI(t.Context(), args...)
		c.usageErr(t, args, strings.Replace(tt.want, "none: does not exist", "directory "+filepath.Join(dir, "none")+" does not exist", 1))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("usage errors left files behind: %v", entries)
	}
}

// Ctrl-C: the demo stops at once (stopBound) and prints the runs it
// measured, labelled; the chart is not written. A demo that missed the
// interrupt would measure the rows after it: "1 of 3 rows" says it did
// not.
func TestDemoInterrupted(t *testing.T) {
	gwNoLeaks(t)
	fakeTerminal(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Interrupt as the second run (full-jitter) starts: the first is done.
	stderr := &cancelOn{marker: "running full-jitter", cancel: cancel}
	chart := filepath.Join(t.TempDir(), "demo.svg")
	var stdout bytes.Buffer
	code := run(ctx, []string{"demo", "-callers", "2", "-outage", "200ms", "-runs", "1", "-o", chart}, &stdout, stderr)
	if took := stderr.since(); took < 0 || took >= stopBound {
		t.Errorf("the demo returned %v after the interrupt (-1: never interrupted), want less than %v", took, stopBound)
	}
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, stderr)
	}
	out := stdout.String()
	for _, want := range []string{"INTERRUPTED: 1 of 3 rows measured; the table shows those.", "\n2        immediate "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "full-jitter  ") {
		t.Errorf("the interrupted run is in the table:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "recoil demo: interrupted: 1 of 3 rows measured; no chart written") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr)
	}
	if _, err := os.Stat(chart); !os.IsNotExist(err) {
		t.Errorf("an interrupted demo wrote its chart (%v)", err)
	}
}
