package main

import (
	"bytes"
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
		{"list", []string{"sim", "-list"}, 0, []string{"blast-radius", "gateway-outage", "occ-contention", "tipping-point", "two-hour-blip"}, ""},
		{"broken file", []string{"sim", broken}, 1, nil, broken + ":5: services[s].workers: want a whole number"},
		{"unknown scenario", []string{"sim", "nope"}, 1, nil, `no scenario file or built-in scenario "nope"`},
		{"no scenario", []string{"sim"}, 2, nil, "name a scenario"},
		{"two scenarios", []string{"sim", "a", "b"}, 2, nil, `unexpected argument "b"`},
		{"bad chart name", []string{"sim", "-o", "chart.pdf", "gateway-outage"}, 2, nil, "a chart is .svg or .png"},
		{"bad flag", []string{"sim", "-frobnicate"}, 2, nil, "flag provided but not defined"},
		{"help", []string{"sim", "-h"}, 0, nil, "usage: recoil sim"},
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
