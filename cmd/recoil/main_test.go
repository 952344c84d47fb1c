package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"no command", nil, 2, nil, "usage: recoil"},
		{"help", []string{"help"}, 0, nil, "demo"},
		{"unknown command", []string{"frobnicate"}, 2, nil, `unknown command "frobnicate"`},
		{"bad flag", []string{"demo", "-nope"}, 2, nil, "flag provided but not defined"},
		{"bad callers", []string{"demo", "-callers", "4,x"}, 2, nil, "-callers"},
		{"bad outage", []string{"demo", "-outage", "-1s"}, 2, nil, "-outage"},
		{"bad chart name", []string{"demo", "-o", "chart.gif"}, 2, nil, ".svg or .png"},
		{"stray argument", []string{"demo", "extra"}, 2, nil, `unexpected argument "extra"`},
		{"demo", []string{"demo", "-callers", "3", "-outage", "300ms"}, 0, []string{
			"recoil demo: seed 004 on real loopback HTTP",
			"peak/200ms", "sim peak/200ms",
			"3 callers, full-jitter against immediate: attempts ÷",
			"3 callers, default against immediate",
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, code, tt.wantCode, stderr.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("run(%q) output lacks %q:\n%s", tt.args, w, stdout.String())
				}
			}
			if tt.wantErr != "" && !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.wantErr)
			}
		})
	}
}
