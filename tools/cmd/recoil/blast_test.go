package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestBlastText(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantOut []string
	}{
		{"the worked example", []string{"blast"}, []string{
			// The five-attempt wrapper: 1+2+4+8 = 15 s asleep, held 15.2 s.
			"waits before retries 1…4: 1s, 2s, 4s, 8s",
			"asleep 15s; worker held 15.2s",
			"held 16.05s if every one of the 5 attempts takes 210ms",
			// 700/min from 140, 2,150 against 2,000, healthy headroom 410.
			"fail fast          1       140      1,590           410",
			"one retry          2       280",
			"configured         5       700      2,150          -150  over by 150/min",
			// 2.33/s; 0.49 workers healthy, 35.49 broken, against 24; one retry 1.2 s, 2.82.
			"2.33/s × time held, against a pool of 24",
			"fail fast   210ms     0.49",
			"one retry    1.2s     2.82",
			"configured  15.2s    35.49",
			"more than the pool of 24",
			// Three layers of three attempts: 27 from 3×3×3.
			"3 attempts at each of 3 layers",
			"3, 9, 27 — 27 reach the bottom",
			// 1,240/s, ×1.24, 0.226, 0.968, 960/s, −40/s.
			"load the system sees/s                            1,240",
			"×1.24",
			"failure rate, retries counted                     0.226",
			"share of attempts taken                           0.968",
			"attempts served successfully/s                      960",
			"capacity left over/s                                -40",
			"goodput without retries/s                           800",
			// Tipping points, exact and on the slider.
			"no backoff (configured)  17.08%                17.5%",
			"with backoff             36.64%                  37%",
		}},
		{"full jitter halves the wait", []string{"blast", "-jitter", "full"}, []string{
			"asleep 7.5s on average (at most 15s); worker held 7.7s",
			// Jittered waits spread the retries: backoff is the configured amplification.
			"with backoff (configured)  36.64%",
			"76/s of goodput it shows less is work recovered after this second, not lost",
		}},
		{"-attempts sets the retries", []string{"blast", "-attempts", "3"}, []string{
			"3 attempts at each of 3 layers",
			"retries per request 2",
		}},
		{"failure as a percentage, backoff configured", []string{"blast", "-failure", "20%", "-backoff"}, []string{
			"failure rate, retries counted        0.226",
			"with backoff (configured)",
		}},
		{"one retry everywhere", []string{"blast", "-attempts", "2", "-retries", "1"}, []string{
			"configured         2       280",
			"2 attempts at each of 3 layers",
			"2, 4, 8 — 8 reach the bottom",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(t.Context(), tt.args, &stdout, &stderr); code != 0 {
				t.Fatalf("run(%q) = %d, want 0; stderr:\n%s", tt.args, code, stderr.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("run(%q) output lacks %q:\n%s", tt.args, w, stdout.String())
				}
			}
		})
	}
}

// amplification is the part of an Amplification the JSON test reads.
type amplification struct {
	Load    float64 `json:"load_per_s"`
	Factor  float64 `json:"amplification"`
	Failure float64 `json:"failure"`
	Share   float64 `json:"share"`
	Served  float64 `json:"served_per_s"`
	Spare   float64 `json:"spare_per_s"`
	Tipping struct {
		Exact  float64 `json:"exact"`
		Slider float64 `json:"slider"`
	} `json:"tipping"`
}

func TestBlastJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"blast", "-json"}
	if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("run(%q) = %d, want 0; stderr:\n%s", args, code, stderr.String())
	}
	var r struct {
		Inputs struct {
			Attempts int     `json:"attempts"`
			BaseMS   float64 `json:"base_ms"`
			Jitter   string  `json:"jitter"`
		} `json:"inputs"`
		Policies []struct {
			Name     string  `json:"name"`
			Sleeping float64 `json:"sleeping_ms"`
			Held     float64 `json:"held_ms"`
			Draw     float64 `json:"draw_per_min"`
			Total    float64 `json:"total_per_min"`
			Headroom float64 `json:"headroom_per_min"`
			Workers  float64 `json:"workers"`
		} `json:"policies"`
		Layers struct {
			Reach float64 `json:"reach"`
		} `json:"layers"`
		WithoutBackoff amplification `json:"without_backoff"`
		WithBackoff    amplification `json:"with_backoff"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, stdout.String())
	}
	if len(r.Policies) != 3 {
		t.Fatalf("%d policies, want 3:\n%s", len(r.Policies), stdout.String())
	}
	fast, one, five := r.Policies[0], r.Policies[1], r.Policies[2]
	near := func(x, decimals float64) float64 { p := math.Pow(10, decimals); return math.Round(x*p) / p }
	for _, c := range []struct {
		name      string
		got, want float64
		decimals  float64
	}{
		{"inputs.attempts", float64(r.Inputs.Attempts), 5, 0},
		{"inputs.base_ms", r.Inputs.BaseMS, 1000, 0},
		{"sleeping", five.Sleeping, 15000, 0},
		{"held", five.Held, 15210, 0},
		{"draw", five.Draw, 700, 0},
		{"total", five.Total, 2150, 0},
		{"headroom", five.Headroom, -150, 0},
		{"healthy headroom", fast.Headroom, 410, 0},
		{"healthy workers", fast.Workers, 0.49, 2},
		{"broken workers", five.Workers, 35, 0},
		{"one retry draw", one.Draw, 280, 0},
		{"one retry held", one.Held, 1210, 0},
		{"reach", r.Layers.Reach, 27, 0},
		{"load", r.WithoutBackoff.Load, 1240, 0},
		{"amplification", r.WithoutBackoff.Factor, 1.24, 2},
		{"failure", r.WithoutBackoff.Failure, 0.226, 3},
		{"share", r.WithoutBackoff.Share, 0.968, 3},
		{"served", r.WithoutBackoff.Served, 960, 0},
		{"spare", r.WithoutBackoff.Spare, -40, 0},
		{"tipping slider", r.WithoutBackoff.Tipping.Slider, 0.175, 4},
		{"tipping slider with backoff", r.WithBackoff.Tipping.Slider, 0.37, 4},
		{"tipping exact", r.WithoutBackoff.Tipping.Exact, 0.1708, 4},
		{"tipping exact with backoff", r.WithBackoff.Tipping.Exact, 0.3664, 4},
	} {
		if got := near(c.got, c.decimals); got != c.want {
			t.Errorf("json %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.Inputs.Jitter != "none" || one.Workers >= 3 {
		t.Errorf("json: jitter %q, one retry workers %v; want \"none\", < 3", r.Inputs.Jitter, one.Workers)
	}
}

func TestBlastUsageErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"blast", "-capacity", "0"}, "-capacity 0: must be positive"},
		{[]string{"blast", "-capacity", "NaN"}, "-capacity NaN: must be positive"},
		{[]string{"blast", "-offered", "-5"}, "-offered -5: must be positive"},
		{[]string{"blast", "-failure", "120%"}, "-failure 1.2: must be between 0 and 1"},
		{[]string{"blast", "-failure", "abc"}, `invalid value "abc" for flag -failure`},
		{[]string{"blast", "-jitter", "weird"}, `invalid value "weird" for flag -jitter`},
		{[]string{"blast", "-attempts", "0"}, "-attempts 0: must be between 1 and 100"},
		{[]string{"blast", "-retries", "-1"}, "-retries -1: must be between 0 and 40"},
		{[]string{"blast", "-multiplier", "0.5"}, "-multiplier 0.5: must be between 1 and 100"},
		// Zero was silently read as the default.
		{[]string{"blast", "-multiplier", "0"}, "-multiplier 0: must be between 1 and 100 (leave the flag out for its default)"},
		{[]string{"blast", "-step", "0"}, "-step 0: must be more than 0 and at most 1 (leave the flag out for its default)"},
		{[]string{"blast", "-base", "-1s"}, "-base -1s: must not be negative"},
		{[]string{"blast", "-fail-time", "-1ms"}, "-fail-time -1ms: must not be negative"},
		{[]string{"blast", "-pool", "0"}, "-pool 0: must be at least 1"},
		{[]string{"blast", "-layers", "0"}, "-layers 0: must be between 1 and 64"},
		{[]string{"blast", "-allowance", "0"}, "-allowance 0: must be positive"},
		{[]string{"blast", "-rate", "-1"}, "-rate -1: must be between 0"},
		{[]string{"blast", "-step", "2"}, "-step 2: must be in (0, 1]"},
		{[]string{"blast", "-pool", "many"}, `invalid value "many" for flag -pool`},
		{[]string{"blast", "extra"}, `unexpected argument "extra"`},
		{[]string{"blast", "-attempts", "3", "-retries", "4"}, "-attempts 3 and -retries 4 disagree"},
		{[]string{"blast", "-attempts", "60"}, "-attempts 60: the layers and the amplification take at most 41 attempts"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), tt.args, &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d, want 2; stderr:\n%s", tt.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.wantErr)
		}
		if stdout.Len() != 0 {
			t.Errorf("run(%q) wrote to stdout on a usage error:\n%s", tt.args, stdout.String())
		}
	}
}

func TestBlastHelp(t *testing.T) {
	c := runCLI(t.Context(), "blast", "-h")
	c.check(t, []string{"blast", "-h"}, 0, []string{"Examples:", "recoil blast -json", `"exact" is the root`,
		`"slider" reads it off a failure-rate slider`, "-failure value"}, nil)
	if top := runCLI(t.Context(), "help"); !strings.Contains(top.stdout, "  blast ") {
		t.Errorf("recoil help does not list blast:\n%s", top.stdout)
	}
}
