package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recoil-go/recoil/internal/leakcheck"
	"github.com/recoil-go/recoil/tools/gateway"
)

// gwNoLeaks checks, once the test and its cleanups are done, that it left
// no goroutine running.
func gwNoLeaks(t *testing.T) {
	ignore := leakcheck.IgnoreCurrent()
	t.Cleanup(func() { leakcheck.VerifyNone(t, ignore) })
}

// gwOutput is stdout for a command that runs until cancelled: it keeps what
// was written and hands each complete line to lines as it arrives.
type gwOutput struct {
	mu    sync.Mutex
	buf   strings.Builder
	part  string
	lines chan string
}

func newGWOutput() *gwOutput { return &gwOutput{lines: make(chan string, 64)} }

func (o *gwOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	o.part += string(p)
	for {
		line, rest, ok := strings.Cut(o.part, "\n")
		if !ok {
			break
		}
		select {
		case o.lines <- line:
		default:
		}
		o.part = rest
	}
	return len(p), nil
}

func (o *gwOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// startGateway runs "recoil gateway args…" until the test ends and returns
// its URL, read from the line it prints.
func startGateway(t *testing.T, args ...string) (string, *gwOutput, func() error) {
	t.Helper()
	out := newGWOutput()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runGateway(ctx, args, out, io.Discard) }()
	var stopped bool
	var err error
	stop := func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { stop() })
	select {
	case line := <-out.lines:
		const prefix = "recoil gateway: serving on "
		if !strings.HasPrefix(line, prefix) {
			t.Fatalf("first line %q, want %q…", line, prefix)
		}
		return strings.TrimPrefix(line, prefix), out, stop
	case err := <-done:
		stopped = true
		t.Fatalf("runGateway returned early: %v", err)
	}
	return "", nil, nil
}

func TestGatewayCommand(t *testing.T) {
	gwNoLeaks(t)
	url, out, stop := startGateway(t, "-outage", "0s+1h:529", "-reject-field", "strict", "-window", "100ms")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for range 3 {
		resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, url+"/v1/messages"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 529 {
			t.Errorf("status %d, want 529", resp.StatusCode)
		}
	}
	if err := stop(); !errors.Is(err, errInterrupted) {
		t.Fatalf("runGateway = %v, want it interrupted after cancel", err)
	}
	for _, want := range []string{
		"outage from 0s for 1h0m0s, answering 529",
		"stopped (interrupted); counted: 3 attempts, 0 answered with a success, peak 3 in one 100ms (sliding), from 1 clients, 0 logical requests",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestGatewayCommandTargets serves two targets, each under its prefix,
// with its own faults, and prints what each counted.
func TestGatewayCommandTargets(t *testing.T) {
	gwNoLeaks(t)
	dir := t.TempDir()
	down := filepath.Join(dir, "down.yaml")
	if err := os.WriteFile(down, []byte("outages:\n  - {duration: 1h, status: 429, code: insufficient_quota}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, out, stop := startGateway(t, "-target", "primary="+down, "-target", "backup")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, tc := range []struct {
		path   string
		status int
	}{{"/primary/v1/messages", 429}, {"/primary/v1/messages", 429}, {"/backup/v1/messages", 200}} {
		resp, err := tr.RoundTrip(mustRequest(t, http.MethodPost, url+tc.path))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.path, resp.StatusCode, tc.status)
		}
	}
	if err := stop(); !errors.Is(err, errInterrupted) {
		t.Fatalf("runGateway = %v, want it interrupted after cancel", err)
	}
	for _, want := range []string{
		"2 targets, each under its own path · index " + url + "/",
		"primary: dependency " + url + "/primary/v1/messages",
		"outage from 0s for 1h0m0s, answering 429 insufficient_quota (from primary's first attempt)",
		"primary: 2 attempts, 0 answered with a success",
		"backup: 1 attempts, 1 answered with a success",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestGatewayCommandTimelineAndFlags(t *testing.T) {
	gwNoLeaks(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(file, []byte("window: 50ms\nfailure: {rate: 1, status: 502}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The flag overrides the timeline's failure status; its rate stays.
	url, _, stop := startGateway(t, "-timeline", file, "-fail-status", "503")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, url+"/x"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("status %d, want 503 (the flag over the timeline's 502)", resp.StatusCode)
	}
	if err := stop(); !errors.Is(err, errInterrupted) {
		t.Error(err)
	}
}

func TestGatewayCommandBare(t *testing.T) {
	gwNoLeaks(t)
	out := newGWOutput()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runGateway(ctx, []string{"-bare"}, out, io.Discard) }()
	line := <-out.lines
	url := strings.TrimSuffix(strings.TrimPrefix(line, "recoil gateway: bare handler on "), " (counts nothing)")
	tr := &http.Transport{}
	resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, url+"/v1/messages"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.CloseIdleConnections()
	cancel()
	if err := <-done; !errors.Is(err, errInterrupted) {
		t.Errorf("runGateway -bare = %v, want it interrupted", err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(string(b), `{"id":"msg_gateway"`) {
		t.Errorf("bare answered %d %s", resp.StatusCode, b)
	}
}

func TestGatewayCommandUsage(t *testing.T) {
	gwNoLeaks(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("outages:\n  - start: 0s\n    durration: 700ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-timeline", bad}, `bad.yaml:3: outages[0].durration: unknown field "durration"`},
		{[]string{"-timeline", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{[]string{"-outage", "soon"}, `duration "soon" is not a duration`},
		{[]string{"-outage", "0s+1s:abc"}, `status "abc" is not a number`},
		{[]string{"-outage", "0s+1s:200"}, "not an error status"},
		{[]string{"-outage", "-1s+1s"}, "-1s is negative"},
		{[]string{"-latency", "normal:5ms"}, "want constant:D"},
		{[]string{"-latency", "uniform:5ms"}, "want constant:D"},
		{[]string{"-latency", "constant:x"}, `"x" is not a duration`},
		{[]string{"-fail-rate", "2"}, "-fail-rate 2: gateway: failure.rate: 2 is not between 0 and 1"},
		{[]string{"-addr", "0.0.0.0:0"}, "-addr 0.0.0.0:0: not a loopback address; add -allow-remote"},
		{[]string{"extra"}, "unexpected argument"},
		// Flags that were silently replaced by a default, or ignored.
		{[]string{"-recover-below", "20"}, "-recover-below applies to the -outage flags, and none is given"},
		{[]string{"-outage", "1s", "-recover-for", "1s"}, "-recover-for applies with -recover-below, which is not given"},
		{[]string{"-outage", "1s", "-recover-below", "-1"}, "-recover-below -1: must be 1 or more"},
		{[]string{"-bare", "-outage", "1s"}, "-bare serves a handler without faults or counting; it takes no -outage"},
		{[]string{"-bare", "-timeline", bad}, "it takes no -timeline"},
		{[]string{"-window", "0s"}, "-window 0s: must be 1ms to 1m0s (leave the flag out for its default)"},
		{[]string{"-window", "2m"}, "-window 2m0s: gateway: window: 2m0s is not between 1ms and 1m0s"},
		{[]string{"-fail-rate", "0.5", "-fail-status", "0"}, "-fail-status 0: must be 400 to 599"},
		{[]string{"-fail-rate", "0.5", "-fail-status", "200"}, "-fail-status 200: gateway: failure.status: 200 is not an error status"},
		{[]string{"-fail-status", "503"}, "-fail-status is the status of random failures; set -fail-rate"},
		{[]string{"-stream-events", "0"}, "-stream-events 0: must be 1 to 100000"},
		{[]string{"-stall-after", "2"}, "-stall-after shapes stalling streams; set -stall-rate"},
		{[]string{"-stall-for", "1s"}, "-stall-for shapes stalling streams; set -stall-rate"},
		{[]string{"-allowance-header", "X-Key"}, "-allowance-header names the allowance's key; set -allowance"},
		{[]string{"-client-header", ""}, "-client-header is empty: name a header (leave the flag out for X-Client-Id)"},
		{[]string{"-latency", "uniform:9ms,1ms"}, "-latency uniform:9ms,1ms: gateway: latency.max: 1ms is less than min 9ms"},
		// Several targets, each with its own timeline file.
		{[]string{"-target", "Primary"}, `name "Primary": want 1 to 32 lower-case letters, digits, - or _, starting with a letter`},
		{[]string{"-target", "stats"}, `name "stats" is one of the set's own paths`},
		{[]string{"-target", "a", "-target", "a"}, `-target: gateway: targets: name "a" is given twice`},
		{[]string{"-target", "a="}, `"a=" names no timeline file after =`},
		{[]string{"-target", "a=" + filepath.Join(dir, "none.yaml")}, "none.yaml: no such file or directory"},
		{[]string{"-target", "a=" + bad}, `bad.yaml:3: outages[0].durration: unknown field "durration"`},
		{[]string{"-target", "a", "-fail-rate", "0.1"}, "-target gives each target its faults in its own timeline file; -fail-rate would apply to none of them"},
		{[]string{"-target", "a", "-bare"}, "-bare would apply to none of them"},
		{[]string{"-target", "a", "-addr", "0.0.0.0:0"}, "-addr 0.0.0.0:0: not a loopback address; add -allow-remote"},
	}
	for _, tt := range tests {
		args := append([]string{"gateway"}, tt.args...)
		runCLI(t.Context(), args...).usageErr(t, args, tt.want)
	}
}

func TestParseLatency(t *testing.T) {
	gwNoLeaks(t)
	ms := time.Millisecond
	tests := []struct {
		in   string
		want gateway.Latency
	}{
		{"20ms", gateway.Latency{Dist: gateway.Constant, Mean: 20 * ms}},
		{"constant:5ms", gateway.Latency{Dist: gateway.Constant, Mean: 5 * ms}},
		{"uniform:1ms,9ms", gateway.Latency{Dist: gateway.Uniform, Min: ms, Max: 9 * ms}},
		{"exponential:20ms", gateway.Latency{Dist: gateway.Exponential, Mean: 20 * ms}},
		{"exponential:20ms,1ms,1s", gateway.Latency{Dist: gateway.Exponential, Mean: 20 * ms, Min: ms, Max: time.Second}},
	}
	for _, tt := range tests {
		got, err := parseLatency(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseLatency(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestOutageFlag(t *testing.T) {
	gwNoLeaks(t)
	var o outageFlags
	for _, v := range []string{"700ms", "2s+1s:529"} {
		if err := o.Set(v); err != nil {
			t.Fatalf("Set(%q) = %v", v, err)
		}
	}
	want := outageFlags{{Duration: 700 * time.Millisecond}, {Start: 2 * time.Second, Duration: time.Second, Status: 529}}
	if len(o) != 2 || o[0] != want[0] || o[1] != want[1] {
		t.Errorf("outages %+v, want %+v", o, want)
	}
}

// The first line tells a user where the gateway is; the scanner reads it
// the way a shell script would.
func TestGatewayCommandPrintsAddressFirst(t *testing.T) {
	gwNoLeaks(t)
	url, out, stop := startGateway(t)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("address %q, want loopback", url)
	}
	if err := stop(); !errors.Is(err, errInterrupted) {
		t.Error(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Scan()
	if !strings.Contains(sc.Text(), url) {
		t.Errorf("first line %q does not give the address", sc.Text())
	}
}

// Ctrl-C stops the gateway at once even with an answer in progress (here,
// a latency of an hour): the answer is given without its latency, not cut
// off after gateway.ShutdownTimeout, and the gateway prints what it
// counted.
func TestGatewayCommandInterrupted(t *testing.T) {
	gwNoLeaks(t)
	url, out, stop := startGateway(t, "-latency", "1h")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	answered := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, url+"/v1/messages"))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		answered <- err
	}()
	// Wait until the attempt has arrived: the gateway's stats count it.
	for {
		resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, url+"/stats?series=0"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `"attempts":1`) {
			break
		}
		runtime.Gosched()
	}
	start := time.Now()
	if err := stop(); !errors.Is(err, errInterrupted) {
		t.Errorf("runGateway = %v, want it interrupted", err)
	}
	if took := time.Since(start); took >= stopBound {
		t.Errorf("the gateway took %v to stop, want less than %v", took, stopBound)
	}
	if err := <-answered; err != nil {
		t.Errorf("the attempt in progress was not answered: %v", err)
	}
	if !strings.Contains(out.String(), "stopped (interrupted); counted: 1 attempts") {
		t.Errorf("output lacks what was counted:\n%s", out)
	}
}
