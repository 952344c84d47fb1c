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
		{"bad value", []string{"demo", "-pool", "0"}, 2, nil, "must be positive"},
		{"stray argument", []string{"demo", "extra"}, 2, nil, `unexpected argument "extra"`},
		{"demo", []string{"demo"}, 0, []string{
			// The seed 000 wrapper: 1+2+4+8 = 15 s asleep, five attempts,
			// 700 attempts/min from 140; more workers than the pool of 24.
			"=> 5 attempt(s), 15s asleep, worker held 16.05s",
			"700 attempts/min",
			"more than the pool",
			// The counter-proposal: 280/min, under three workers... of 24.
			"=> 2 attempt(s), 1s asleep",
			"280 attempts/min",
			// The default: one attempt, 0.49 workers.
			"attempt 1 at   0.00s: 400 -> stop: permanent error",
			"=> 1 attempt(s), 0s asleep, worker held 210ms",
			"= 0.49 workers of 24",
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
