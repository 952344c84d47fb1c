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
	"sync"
	"syscall"
	"testing"

	"github.com/recoil-go/recoil/proxy"
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

// Without client authentication the address the listener is bound to must
// be loopback, whatever name the configuration gave.
func TestCheckBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   proxy.Config
		bound string
		ok    bool
	}{
		{"loopback, no clients", proxy.Config{}, "127.0.0.1:8787", true},
		{"IPv6 loopback, no clients", proxy.Config{}, "[::1]:8787", true},
		{"beyond loopback, no clients", proxy.Config{}, "10.1.2.3:8787", false},
		{"everywhere, no clients", proxy.Config{}, "[::]:8787", false},
		{"beyond loopback, with clients", proxy.Config{Clients: []proxy.Client{{Name: "a"}}}, "10.1.2.3:8787", true},
		{"beyond loopback, insecure in so many words", proxy.Config{InsecureNoClientAuth: true}, "10.1.2.3:8787", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkBound(tc.cfg, tc.bound); (err == nil) != tc.ok {
				t.Errorf("checkBound(%s) = %v, want ok %v", tc.bound, err, tc.ok)
			}
		})
	}
}

// A SIGHUP reloads the file; one whose file no longer loads is refused and
// the running configuration stays; reloads end with run.
func TestRunReloads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "proxy.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("routes:\n  - model: m\n    targets: [{base_url: \"http://127.0.0.1:9/v1\"}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	hup := make(chan os.Signal)
	var stderr syncBuffer
	go func() {
		done <- run(ctx, []string{"-config", file, "-listen", "127.0.0.1:0"}, io.Discard, &stderr, hup, ready)
	}()
	addr := <-ready
	routes := func() string {
		resp, err := http.Get("http://" + addr + "/recoil/state")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// reload signals once and waits for the reload's log line: the n-th
	// "configuration reloaded" or "reload refused".
	reload := func(line string, n int) {
		hup <- syscall.SIGHUP
		stderr.waitFor(line, n)
	}
	write("routes:\n  - model: m2\n    targets: [{base_url: \"http://127.0.0.1:9/v1\"}]\n")
	reload("configuration reloaded", 1)
	if s := routes(); !strings.Contains(s, `"openai/m2"`) {
		t.Errorf("after the reload the routes are %s, want openai/m2", s)
	}
	write("routes: [")
	reload("reload refused", 1)
	if s := routes(); !strings.Contains(s, `"openai/m2"`) {
		t.Errorf("after a refused reload the routes are %s, want openai/m2 still", s)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run = %v", err)
	}
	log := stderr.String()
	if n := strings.Count(log, "configuration reloaded"); n != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", n, log)
	}
	if n := strings.Count(log, "reload refused"); n != 1 {
		t.Errorf("%d reloads refused, want 1:\n%s", n, log)
	}
}

// syncBuffer is a bytes.Buffer safe for the command's goroutines, that
// can be waited on for what is written to it.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // a token after a write; made on first use
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	select {
	case s.wrote <- struct{}{}:
	default: // a token is already waiting
	}
	return s.b.Write(p)
}

func (s *syncBuffer) init() {
	if s.wrote == nil {
		s.wrote = make(chan struct{}, 1)
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor returns once sub has been written n times.
func (s *syncBuffer) waitFor(sub string, n int) {
	s.mu.Lock()
	s.init()
	wrote := s.wrote
	s.mu.Unlock()
	for strings.Count(s.String(), sub) < n {
		<-wrote
	}
}
