package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/load"
)

// loadGateway serves a gateway for the test and returns its URL.
func loadGateway(t *testing.T, cfg gateway.Config) (*gateway.Gateway, string) {
	t.Helper()
	g, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
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

// A 700 ms payment-gateway outage through the command: four callers, and
// every caller gets through, under a retry added in a hurry and under full
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

// TestLoadCommandFallback drives a gateway serving two targets, the
// primary overloaded throughout, with the shipped chain: every request is
// answered, by the backup, and the notes say what each target did.
func TestLoadCommandFallback(t *testing.T) {
	gwNoLeaks(t)
	set, err := gateway.NewSet("", false, []gateway.Target{
		{Name: "primary", Config: gateway.Config{Outages: []gateway.Outage{{Duration: time.Hour, Status: 529}}}},
		{Name: "backup"},
	})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := set.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	var stdout bytes.Buffer
	err = runLoad(context.Background(), []string{"-url", url + "/primary/v1/messages", "-body", `{"model":"m"}`, "-callers", "2", "-requests", "20",
		"-policy-file", filepath.Join("..", "..", "load", "testdata", "fallback-chain.yaml"),
		"-upstream", "primary=" + url + "/primary", "-upstream", "backup=" + url + "/backup", "-gateway-stats"}, &stdout, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"recoil chain: 20 logical requests, 20 accepted",
		"most attempts in one logical request: 2",
		"target backup: 20 attempts, 20 requests ended on it",
		"the gateway's target backup counted, since its first attempt: 20 attempts, 20 answered with a success",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestLoadCommandChart draws the adaptive limiter's limit over a short run.
func TestLoadCommandChart(t *testing.T) {
	gwNoLeaks(t)
	_, url := loadGateway(t, gateway.Config{})
	out := filepath.Join(t.TempDir(), "limit.svg")
	var stdout bytes.Buffer
	err := runLoad(context.Background(), []string{"-url", url + "/x", "-callers", "4", "-requests", "40",
		"-policy-file", filepath.Join("..", "..", "load", "testdata", "adaptive.yaml"), "-chart", out, "-knee", "16"}, &stdout, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "adaptive limit: 4 at the start") {
		t.Errorf("output lacks the limit's summary:\n%s", stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("knee (16)")) {
		t.Errorf("chart: %v, %.200q", err, b)
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
		"two: 10 logical requests, 10 accepted; attempts by status: 200 10; ended at its -requests",
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
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, load.MaxBody+1), 0o644); err != nil {
		t.Fatal(err)
	}
	u := []string{"-url", "http://127.0.0.1:1/x"}
	chain := filepath.Join("..", "..", "load", "testdata", "fallback-chain.yaml")
	adaptive := filepath.Join("..", "..", "load", "testdata", "adaptive.yaml")
	tests := []struct {
		args []string
		want string
	}{
		{nil, "-url is required"},
		{[]string{"-url", "ftp://x"}, `-url "ftp://x": want an http or https URL with a host`},
		{[]string{"-url", "http://"}, `-url "http://": want an http or https URL`},
		{append(u, "-policy", "hurried"), `-policy hurried: load: unknown preset "hurried"`},
		{append(u, "-policy-file", bad), `bad.yaml:3: backoff.kind: "shaken" is not a backoff kind`},
		{append(u, "-policy", "immediate", "-policy-file", bad), "-policy and -policy-file: give one"},
		{append(u, "-header", "nocolon"), "want Name: value"},
		{append(u, "-header", "Bad Name: x"), `-header "Bad Name": not a valid header name`},
		{append(u, "-method", "GET /"), `-method "GET /": not a valid HTTP method`},
		{append(u, "-body", "a", "-body-file", bad), "-body and -body-file: give one"},
		{append(u, "-body-file", filepath.Join(dir, "none.json")), "none.json: no such file or directory"},
		{append(u, "-body-file", big), "big.json: more than 32 MiB"},
		{append(u, "stray"), "unexpected argument"},
		// The gateway's page, which it does not count.
		{[]string{"-url", "http://127.0.0.1:1/", "-gateway-stats"}, "-url http://127.0.0.1:1/: a recoil gateway serves its live page at /, which it does not count as an attempt; send the attempts to another path, such as http://127.0.0.1:1/v1/charges"},
		{[]string{"-url", "http://127.0.0.1:1", "-gateway-stats", "-method", "HEAD"}, "send the attempts to another path, such as http://127.0.0.1:1/v1/charges"},
		// Bounds, so that a slip of the finger cannot start a billion callers.
		{append(u, "-callers", "1000000000", "-duration", "1s"), "-callers 1000000000: must be at most 10000"},
		{append(u, "-callers", "-3"), "-callers -3: must not be negative"},
		{append(u, "-rate", "1e9"), "-rate 1e+09: must be at most 10000 per second"},
		{append(u, "-rate", "NaN"), "-rate NaN: must not be negative"},
		{append(u, "-requests", "100000000"), "-requests 100000000: must be at most 10000000"},
		{append(u, "-duration", "48h"), "-duration 48h0m0s: must be at most 24h0m0s"},
		{append(u, "-timeout", "-1s"), "-timeout -1s: must not be negative"},
		{append(u, "-window", "2m"), "-window 2m0s: must be between 1ms and 1m0s"},
		{append(u, "-pause", "-1s"), "-pause -1s: must be 0s (no pause) or more"},
		// Zero would silently mean the default; flags that would be ignored.
		{append(u, "-callers", "0"), "-callers 0: must be 1 to 10000 (leave the flag out for its default)"},
		{append(u, "-rate", "0"), "-rate 0: must be more than 0 and at most 10000 per second"},
		{append(u, "-requests", "0"), "-requests 0: must be 1 to 10000000"},
		{append(u, "-duration", "0s"), "-duration 0s: must be more than 0s and at most 24h0m0s"},
		{append(u, "-timeout", "0s"), "-timeout 0s: must be more than 0s"},
		{append(u, "-window", "0s"), "-window 0s: must be 1ms to 1m0s"},
		{append(u, "-callers", "2", "-rate", "5"), "-callers and -rate: give one"},
		{append(u, "-rate", "5", "-pause", "1s"), "-pause is how long a caller waits before trying again; open-loop arrivals (-rate) try again only with -until-accepted"},
		// The adaptive limit's chart.
		{append(u, "-knee", "0"), "-knee 0: want a whole number of requests in flight, 1 or more"},
		{append(u, "-knee", "5"), "-knee is drawn on the chart; give -chart too"},
		{append(u, "-chart", filepath.Join(dir, "l.svg")), "draws an adaptive limiter's limit, and policy default has none"},
		{append(u, "-policy-file", adaptive, "-chart", filepath.Join(dir, "l.txt")), "-chart"},
		{append(u, "-policy-file", adaptive, "-chart", filepath.Join(dir, "none", "l.svg")), "does not exist"},
		// A fallback chain's upstreams.
		{append(u, "-upstream", "x"), `"x": want NAME=URL`},
		{append(u, "-upstream", "a=http://x", "-upstream", "a=http://y"), "upstream a is given twice"},
		{append(u, "-upstream", "a=http://x"), "-upstream: load: policy default has no fallback targets to send to upstreams"},
		{append(u, "-policy-file", chain), `fallback.targets[0].upstream: target "primary" reaches upstream "primary", which has no URL: give one (recoil load -upstream primary=URL)`},
		{append(u, "-policy-file", chain, "-upstream", "primary=http://x/p", "-upstream", "backup=ftp://x/b"), `target "backup": recoilhttp: endpoint`},
		{append(u, "-policy-file", chain, "-upstream", "primary=http://x/p", "-upstream", "backup=http://x/b", "-upstream", "c=http://x/c"), `no fallback target of policy recoil chain reaches upstream "c"`},
	}
	for _, tt := range tests {
		args := append([]string{"load"}, tt.args...)
		runCLI(t.Context(), args...).usageErr(t, args, tt.want)
	}
}

// A run in which nothing was accepted fails, and says why in words:
// connection refused, a TLS error, a timeout, error statuses.
func TestLoadCommandNothingAccepted(t *testing.T) {
	gwNoLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes that fail are the point
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	_, down := loadGateway(t, gateway.Config{Outages: []gateway.Outage{{Duration: time.Hour}}})
	// Each logical request makes one attempt, and only the slow server's
	// runs into the request's timeout: the others have a minute to fail as
	// they do, so a busy machine that takes long to dial, shake hands or be
	// answered does not turn them into timeouts. The wrapper's one attempt
	// with a 200 ms timeout: its first wait, 1 s, does not fit.
	once := filepath.Join(t.TempDir(), "once.yaml")
	if err := os.WriteFile(once, []byte("preset: wrapper\nmax_attempts: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oneAttempt := []string{"-policy-file", once, "-timeout", "1m"}
	tests := []struct {
		name, url string
		policy    []string
		stderr    []string
		stdout    string
	}{
		{"connection refused", refused, oneAttempt, []string{"recoil load: nothing was accepted: 3 of 3 attempts got no response: connection refused ×3",
			"(the first: dial tcp " + strings.TrimPrefix(strings.TrimSuffix(refused, "/"), "http://") + ": connect: connection refused)"},
			"no response: connection refused 3 (first: dial tcp"},
		{"TLS error", tlsSrv.URL, oneAttempt, []string{"nothing was accepted: 3 of 3 attempts got no response: TLS error ×3"}, "no response: TLS error 3"},
		{"timeout", slow.URL, []string{"-policy", "wrapper", "-timeout", "200ms"}, []string{"nothing was accepted: 3 of 3 attempts got no response: timeout ×3"}, "no response: timeout 3"},
		{"error statuses", down + "/v1/charges", oneAttempt, []string{"nothing was accepted: 3 of 3 attempts got an error status: 503 ×3"}, "attempts by status: 503 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"load", "-url", tt.url, "-requests", "3", "-pause", "0s"}, tt.policy...)
			c := runCLI(t.Context(), args...)
			c.check(t, args, exitFailure, []string{tt.stdout}, tt.stderr)
		})
	}
}

// Ctrl-C: load stops at once and prints what the callers counted,
// labelled as interrupted. Every attempt after the first hangs, and so
// does the -gateway-stats read after the run: the command returns only
// because the interrupt cut the attempts off (their timeout is an hour),
// and it gives the stats read statsWaitInterrupted, not statsWait.
func TestLoadCommandInterrupted(t *testing.T) {
	gwNoLeaks(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var canceled time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if canceled.IsZero() {
			canceled = time.Now()
			cancel() // the first attempt is answered; the next ones hang
			mu.Unlock()
			return
		}
		mu.Unlock()
		<-r.Context().Done()
	}))
	defer srv.Close()
	args := []string{"load", "-url", srv.URL + "/v1/charges", "-callers", "3", "-gateway-stats", "-timeout", "1h"}
	c := runCLI(ctx, args...)
	mu.Lock()
	took := time.Since(canceled)
	mu.Unlock()
	if took >= stopBound {
		t.Errorf("load returned %v after the interrupt, want less than %v", took, stopBound)
	}
	c.check(t, args, exitInterrupted,
		[]string{"INTERRUPTED after ", "what the callers counted until then", "; interrupted"},
		[]string{"recoil load: interrupted after "})
}

func TestLoadCommandRegistered(t *testing.T) {
	gwNoLeaks(t)
	c := runCLI(t.Context(), "help")
	for _, name := range []string{"gateway", "load"} {
		if !strings.Contains(c.stdout, "  "+name+" ") {
			t.Errorf("usage lacks %q:\n%s", name, c.stdout)
		}
	}
}

// The charge route with 30 % of its answers lost after the charge: callers
// that retry POSTs without keys charge some logical requests twice; with
// the keys they send by default, the gateway replays and charges each
// once. The summary says so, from the gateway's counts during the run.
func TestLoadCommandChargeDuplicates(t *testing.T) {
	gwNoLeaks(t)
	tests := []struct {
		keys       string
		duplicates bool
	}{{"false", true}, {"true", false}}
	for _, tt := range tests {
		t.Run("idempotency-keys="+tt.keys, func(t *testing.T) {
			t.Parallel()
			_, url := loadGateway(t, gateway.Config{Seed: 7, Charge: gateway.Charge{DropRate: 0.3, Idempotency: true}})
			args := []string{"-url", url + "/v1/charges", "-body", `{"amount":100}`, "-callers", "4", "-requests", "60",
				"-policy", "exponential", "-gateway-stats", "-idempotency-keys=" + tt.keys}
			var stdout, stderr bytes.Buffer
			if err := runLoad(context.Background(), append(args, "-json"), &stdout, &stderr); err != nil {
				t.Fatalf("runLoad: %v\n%s", err, stderr.String())
			}
			var got struct {
				Load struct {
					NoKeys bool `json:"no_idempotency_keys"`
				} `json:"load"`
				Charges *struct {
					Effects, Duplicates uint64
					Dropped             uint64 `json:"dropped_after_charge"`
					Doubled             int    `json:"requests_charged_more_than_once"`
				} `json:"charges_during_run"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || got.Charges == nil {
				t.Fatalf("JSON %v: %s", err, stdout.String())
			}
			c := got.Charges
			if got.Load.NoKeys != tt.duplicates || c.Dropped == 0 || (c.Duplicates > 0) != tt.duplicates || (c.Doubled > 0) != tt.duplicates {
				t.Fatalf("keys %s: no_idempotency_keys %v, charges %+v; want drops, and duplicates only without keys", tt.keys, got.Load.NoKeys, *c)
			}
			t.Logf("idempotency keys %s: %+v", tt.keys, *c)

			stdout.Reset()
			if err := runLoad(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("runLoad: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), "charges during this run (/v1/charges, Idempotency-Key honoured): ") ||
				strings.Contains(stdout.String(), " 0 duplicates (") == tt.duplicates {
				t.Fatalf("summary:\n%s", stdout.String())
			}
		})
	}
}

// recoil load -metrics-addr serves the callers' retries to Prometheus
// while the run lasts; an address it cannot listen on is a usage error.
// The gateway stays down and the run lasts until the test, having read a
// failed attempt in the metrics, interrupts it: however late a busy
// machine runs the test's reads, the run is still there to be read.
func TestLoadCommandMetrics(t *testing.T) {
	_, down := loadGateway(t, gateway.Config{Outages: []gateway.Outage{{Duration: time.Hour}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	args := []string{"load", "-url", down + "/v1/charges", "-policy", "default", "-callers", "4",
		"-until-accepted", "-duration", "1h", "-metrics-addr", addr}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan cli, 1)
	go func() { done <- runCLI(ctx, args...) }()
	for seen := false; !seen; {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			seen = failedAttempts(string(b))
		}
		if seen {
			break
		}
		select {
		case c := <-done:
			t.Fatalf("the run ended before its metrics showed a failed attempt: exit %d\n%s", c.code, c.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	c := <-done
	c.check(t, args, exitInterrupted, nil, []string{"metrics at http://" + addr + "/metrics"})
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("metrics still served at %s after the run", addr)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	args = []string{"load", "-url", down, "-metrics-addr", busy.Addr().String()}
	runCLI(t.Context(), args...).usageErr(t, args, "-metrics-addr "+busy.Addr().String())
}

// failedAttempts reports whether a Prometheus exposition counts a failed
// attempt of the default policy: a recoil_attempts_total series whose
// outcome is not success, above zero (the series start at zero).
func failedAttempts(exposition string) bool {
	for _, line := range strings.Split(exposition, "\n") {
		series, value, ok := strings.Cut(line, "} ")
		if ok && strings.HasPrefix(series, "recoil_attempts_total{") && strings.Contains(series, `policy="default"`) &&
			!strings.Contains(series, `outcome="success"`) && value != "0" {
			return true
		}
	}
	return false
}
