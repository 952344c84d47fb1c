package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSim(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("name: broken\nduration: 1m\nservices:\n  - name: s\n    workers: lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(mine, []byte(`name: mine
duration: 10s
policies: [{name: default}]
services: [{name: s, workers: 4, service: 50ms}]
clients: [{name: c, target: s, rate: 20/s}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"built-in by name", []string{"sim", "gateway-outage"}, 0,
			[]string{"gateway-outage", "seed 1", "immediate 20ms", "exp+full jitter 60ms", "recoil default", "services"}, ""},
		{"flags after the name", []string{"sim", "gateway-outage.yaml", "-seed", "9"}, 0, []string{"seed 9"}, ""},
		{"a file", []string{"sim", mine}, 0, []string{"mine", "default"}, ""},
		{"list", []string{"sim", "-list"}, 0, []string{"blast-radius", "gateway-outage", "occ-contention", "one-at-a-time", "tipping-point", "two-hour-blip"}, ""},
		{"broken file", []string{"sim", broken}, 1, nil, broken + ":5: services[s].workers: want a whole number"},
		{"unknown scenario", []string{"sim", "nope"}, 2, nil, `no scenario file or built-in scenario "nope"`},
		{"no scenario", []string{"sim"}, 2, nil, "name a scenario"},
		{"wide", []string{"sim", "-wide", "gateway-outage"}, 0, []string{"goodput/s"}, ""},
		{"wide and json", []string{"sim", "-wide", "-json", "gateway-outage"}, 2, nil, "-json prints none"},
		{"two scenarios", []string{"sim", "a", "b"}, 2, nil, `unexpected argument "b"`},
		{"bad chart name", []string{"sim", "-o", "chart.pdf", "gateway-outage"}, 2, nil, "a chart's name ends in .svg or .png"},
		{"bad flag", []string{"sim", "-frobnicate"}, 2, nil, "flag provided but not defined"},
		{"help", []string{"sim", "-h"}, 0, []string{"usage: recoil sim"}, ""},
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

// TestSimFiles: -json, -csv and -o write what they say, and the same seed
// writes the same bytes.
func TestSimFiles(t *testing.T) {
	dir := t.TempDir()
	var outs [2]string
	for i := range outs {
		svg := filepath.Join(dir, "chart.svg")
		png := filepath.Join(dir, "chart.png")
		csv := filepath.Join(dir, "series.csv")
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), []string{"sim", "-json", "-csv", csv, "-o", svg, "gateway-outage"}, &stdout, &stderr); code != 0 {
			t.Fatalf("sim -json -csv -o = %d; stderr:\n%s", code, stderr.String())
		}
		var res struct {
			Scenario string
			Runs     []struct {
				Policy    string
				Succeeded int
			}
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Scenario != "gateway-outage" || len(res.Runs) != 6 {
			t.Fatalf("sim -json printed %d runs of %q (%v):\n%s", len(res.Runs), res.Scenario, err, stdout.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("stderr = %q, want nothing (no progress bar off a terminal)", stderr.String())
		}
		outs[i] = stdout.String()
		data, err := os.ReadFile(csv)
		if err != nil || !strings.HasPrefix(string(data), "policy,clients[callers].callers,service,t_s,") {
			t.Errorf("CSV = %.80q, %v; want the time series", data, err)
		}
		data, err = os.ReadFile(svg)
		if err != nil || !bytes.Contains(data, []byte("<svg")) {
			t.Errorf("chart.svg = %.80q, %v; want an SVG", data, err)
		}
		if code := run(t.Context(), []string{"sim", "-o", png, "-chart", "queue", "-service", "gateway", "gateway-outage"}, &stdout, &stderr); code != 0 {
			t.Fatalf("sim -o chart.png = %d; stderr:\n%s", code, stderr.String())
		}
		data, err = os.ReadFile(png)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("chart.png = %.8q, %v; want a PNG", data, err)
		}
	}
	if outs[0] != outs[1] {
		t.Error("two runs with the same seed printed different JSON")
	}
}

// Every flag and output path is checked before the simulation starts: a
// mistake costs nothing and leaves no file, however long the scenario.
func TestSimUsageErrors(t *testing.T) {
	dir := t.TempDir()
	swept := filepath.Join(dir, "swept.yaml")
	if err := os.WriteFile(swept, []byte(`name: swept
duration: 10s
policies: [{name: default}]
services: [{name: s, workers: 4, service: 50ms}]
clients: [{name: c, target: s, rate: 20/s}]
sweep: {path: "services[s].workers", values: [2, 4, 8]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "x.svg")
	csv := filepath.Join(dir, "x.csv")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-chart", "pie", "-o", svg, "gateway-outage"}, "-chart pie: want one of attempts, throttled, succeeded, queue, busy over time"},
		{[]string{"-chart", "peak", "-o", svg, "gateway-outage"}, "-chart peak is drawn against a sweep of at least three numbers, which scenario gateway-outage does not have"},
		{[]string{"-service", "nope", "-o", svg, "gateway-outage"}, "-service nope: scenario gateway-outage has no such service (it has gateway)"},
		{[]string{"-service", "s", "-chart", "peak", "-o", svg, swept}, "-service s: the -chart peak chart is drawn against the sweep"},
		{[]string{"-chart", "queue", "gateway-outage"}, "-chart chooses what the -o chart shows; give -o too"},
		{[]string{"-service", "gateway", "gateway-outage"}, "-service chooses what the -o chart shows; give -o too"},
		{[]string{"-o", filepath.Join(dir, "none", "x.svg"), "gateway-outage"}, "-o " + filepath.Join(dir, "none", "x.svg") + ": directory " + filepath.Join(dir, "none") + " does not exist"},
		{[]string{"-csv", filepath.Join(dir, "none", "x.csv"), "gateway-outage"}, "-csv " + filepath.Join(dir, "none", "x.csv") + ": directory"},
		{[]string{"-csv", dir, "gateway-outage"}, "-csv " + dir + ": is a directory"},
		{[]string{"-o", svg, "-csv", svg, "gateway-outage"}, "-o and -csv name the same file"},
		{[]string{"-o", csv, "gateway-outage"}, "-o " + csv + ": a chart's name ends in .svg or .png"},
		{[]string{"-seed", "0", "gateway-outage"}, "-seed 0: must be 1 or more (leave the flag out for its default)"},
		{[]string{"-window", "0s", "gateway-outage"}, "-window 0s: must be 1ms to 1m0s"},
		{[]string{"-window", "1us", "gateway-outage"}, "-window 1µs: must be 1ms to 1m0s"},
		{[]string{"-window", "-1s", "gateway-outage"}, "-window -1s: must be 1ms to 1m0s"},
		{[]string{"-list", "gateway-outage"}, "-list prints the built-in scenarios; it takes no scenario"},
		{[]string{"-list", "-json"}, "-list prints the built-in scenarios; it takes no -json"},
	}
	for _, tt := range tests {
		args := append([]string{"sim"}, tt.args...)
		runCLI(t.Context(), args...).usageErr(t, args, tt.want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("usage errors left files behind: %v", entries)
	}
}

// Ctrl-C: the simulation stops at once (stopBound: its second run is hours
// of work) and prints the runs it finished, labelled; no -o or -csv file is
// written.
func TestSimInterrupted(t *testing.T) {
	fakeTerminal(t)
	dir := t.TempDir()
	// Two runs: the first over in a moment, the second hours of work.
	slow := filepath.Join(dir, "slow.yaml")
	if err := os.WriteFile(slow, []byte(`name: slow
duration: 10h
policies: [{name: default}]
services: [{name: s, workers: 4, service: 1ms}]
clients: [{name: c, target: s, rate: 1/min}]
sweep: {path: "clients[c].rate", values: [1/min, 5000/s]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The progress bar, drawn once a run has taken a second, is the cue.
	stderr := &cancelOn{marker: "[", cancel: cancel}
	svg, csv := filepath.Join(dir, "x.svg"), filepath.Join(dir, "x.csv")
	var stdout bytes.Buffer
	code := run(ctx, []string{"sim", "-o", svg, "-csv", csv, slow}, &stdout, stderr)
	if took := stderr.since(); took < 0 || took >= stopBound {
		t.Errorf("sim returned %v after the interrupt (-1: never interrupted), want less than %v", took, stopBound)
	}
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, stderr)
	}
	out := stdout.String()
	for _, want := range []string{"INTERRUPTED: 1 of 2 runs finished; the tables show those.", "1/min"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "5000/s") {
		t.Errorf("the interrupted run is in the table:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "recoil sim: interrupted: 1 of 2 runs finished; no -o or -csv file written") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("an interrupted simulation wrote files: %v", entries)
	}
}
