package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/gateway"
)

// loadGateway serves a gateway for the test and returns its URL.
func loadGateway(t *testing.T, cfg gateway.Config) (*gateway.Gateway, string) {
	t.Helper()
	g := gateway.New(cfg)
	url, stop, err := g.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return g, url
}

// Seed 004 through the command: four callers, a 700 ms outage, and every
// caller gets through, under the seed's hurried retry and under full
// jitter; the gateway's own counts come back beside the callers'.
func TestLoadCommandEveryCallerGetsThrough(t *testing.T) {
	gwNoLeaks(t)
	for _, policy := range []string{"immediate", "full-jitter"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			g, url := loadGateway(t, gateway.Config{Outages: []gateway.Outage{{Duration: 700 * time.Millisecond}}})
			var stdout, stderr bytes.Buffer
			err := runLoad(context.Background(), []string{"-url", url + "/v1/messages", "-body", `{"model":"m"}`,
				"-callers", "4", "-until-accepted", "-policy", policy, "-duration", "20s", "-json", "-gateway-stats"}, &stdout, &stderr)
			if err != nil {
				t.Fatalf("runLoad: %v\n%s", err, stderr.String())
			}
			var got struct {
				Load struct {
					Calls, OK, Attempts, Peak int64
					AllOK                     bool     `json:"all_ok"`
					AllOKAtMS                 *float64 `json:"all_ok_at_ms"`
				} `json:"load"`
				Gateway struct {
					Attempts int64 `json:"attempts"`
					Accepted int64 `json:"accepted"`
				} `json:"gateway"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("%v:\n%s", err, stdout.String())
			}
			l := got.Load
			if l.Calls != 4 || l.OK != 4 || !l.AllOK || l.AllOKAtMS == nil || *l.AllOKAtMS < 700 {
				t.Errorf("calls %d, ok %d, all ok %v at %v ms; want 4, 4, true, after 700", l.Calls, l.OK, l.AllOK, l.AllOKAtMS)
			}
			if got.Gateway.Attempts != l.Attempts || got.Gateway.Accepted != 4 || g.Stats().Attempts != l.Attempts {
				t.Errorf("the gateway counted %d attempts, %d accepted; the callers sent %d", got.Gateway.Attempts, got.Gateway.Accepted, l.Attempts)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr is not a terminal, yet: %q", stderr.String())
			}
		})
	}
}

func TestLoadCommandTable(t *testing.T) {
	gwNoLeaks(t)
	_, url := loadGateway(t, gateway.Config{})
	dir := t.TempDir()
	policy := filepath.Join(dir, "two.yaml")
	if err := os.WriteFile(policy, []byte("preset: exponential\nmax_attempts: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	err := runLoad(context.Background(), []string{"-url", url + "/x", "-callers", "2", "-requests", "10",
		"-policy-file", policy, "-header", "Authorization: Bearer t", "-gateway-stats"}, &stdout, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		url + "/x — 2 callers\n",
		"policy  calls  ok  failed  unfinished  attempts  per call  peak/200ms",
		"two     10     10  0       0           10        1.00",
		"two: 10 logical requests, 10 accepted; attempts by status: 200:10; stopped early: max requests",
		"the gateway counted, since its first attempt: 10 attempts, 10 answered with a success",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestLoadCommandUsage(t *testing.T) {
	gwNoLeaks(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("max_attempts: 3\nbackoff:\n  kind: shaken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "-url is required"},
		{[]string{"-url", "http://x", "-policy", "hurried"}, `unknown preset "hurried"`},
		{[]string{"-url", "http://x", "-policy-file", bad}, `bad.yaml:3: backoff.kind: "shaken" is not a backoff kind`},
		{[]string{"-url", "http://x", "-callers", "2", "-rate", "5"}, "not both"},
		{[]string{"-url", "ftp://x"}, "want an http or https URL"},
		{[]string{"-url", "http://x", "-header", "nocolon"}, "want Name: value"},
		{[]string{"-url", "http://x", "-body", "a", "-body-file", bad}, "give one"},
		{[]string{"-url", "http://x", "stray"}, "unexpected argument"},
	}
	for _, tt := range tests {
		err := runLoad(context.Background(), tt.args, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("runLoad(%q) = %v, want a usage error saying %q", tt.args, err, tt.want)
		}
	}
}

func TestLoadCommandRegistered(t *testing.T) {
	gwNoLeaks(t)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"help"}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, name := range []string{"gateway", "load"} {
		if !strings.Contains(stderr.String(), "  "+name+" ") {
			t.Errorf("usage lacks %q:\n%s", name, stderr.String())
		}
	}
}
