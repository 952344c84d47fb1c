package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("routes:\n  - model: m\n    targets: [{base_url: nope}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // in the error or on stderr
		err  error
	}{
		{[]string{"-nope"}, "flag provided but not defined", errUsage},
		{[]string{"extra"}, "unexpected argument", errUsage},
		{[]string{"-drain", "0s"}, "-drain must be positive", errUsage},
		{[]string{"-config", bad, "-check"}, "bad.yaml:3: routes[0].targets[0].base_url", nil},
		{[]string{"-config", filepath.Join(dir, "missing.yaml")}, "no such file", nil},
		{[]string{"-listen", "0.0.0.0:0", "-check"}, "is not loopback", nil},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr, nil, nil)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		if tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%v: err = %v, want %v", tc.args, err, tc.err)
		}
		if got := err.Error() + stderr.String(); !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"-help"}, &stdout, io.Discard, nil, nil); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stdout.String(), "usage: recoil proxy") {
		t.Errorf("-help: %v, %q", err, stdout.String())
	}
}

func TestRunServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-quiet"}, io.Discard, io.Discard, nil, ready)
	}()
	addr := <-ready
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/recoil/"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s = %d", path, resp.StatusCode)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run = %v", err)
	}
}
