package load_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/load"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// Four callers against a gateway on loopback, each needing one request
// through; the gateway counts on arrival what the callers counted as they
// sent.
func ExampleRun() {
	g, err := gateway.New(gateway.Config{})
	if err != nil {
		panic(err)
	}
	ln, err := g.Listen()
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln) }()
	defer func() { stop(); <-served }()

	p, err := load.Preset(load.PresetFullJitter)
	if err != nil {
		panic(err)
	}
	res, err := load.Run(context.Background(), load.Config{
		URL:           "http://" + ln.Addr().String() + "/v1/messages",
		Body:          []byte(`{"model":"m","max_tokens":1,"messages":[]}`),
		Callers:       4,
		UntilAccepted: true,
		Policy:        p,
		Duration:      10 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	s := g.Stats()
	fmt.Println("callers through:", res.OK, "of", res.Calls, "- all:", res.AllOK)
	fmt.Println("attempts sent:", res.Attempts, "- counted by the gateway:", s.Attempts)
	fmt.Println("clients the gateway saw:", len(s.Clients))
	// Output:
	// callers through: 4 of 4 - all: true
	// attempts sent: 4 - counted by the gateway: 4
	// clients the gateway saw: 4
}

func ExamplePreset() {
	for _, name := range policyspec.Presets() {
		p, err := load.Preset(name)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-12s %s\n", p.Name, p.About)
	}
	// Output:
	// immediate    every 20 ms, whatever failed, up to 1000 attempts: the retry written in a hurry
	// wrapper      5 attempts, 1 s doubling, anything that is not a 2xx: the wrapper most services ship
	// exponential  60 ms doubling, no jitter, up to 8 attempts
	// full-jitter  full jitter from 60 ms doubling, up to 8 attempts
	// default      the recoil default: classified, 3 attempts, full jitter, share budget, breaker (1 s open)
	// interactive  recoil.Interactive(): 2 attempts, waits under 1 s, a 10 s bound, Retry-After up to 2 s
	// background   recoil.Background(): 6 attempts, waits from 1 s to a minute, half the default share
}

func ExampleParsePolicy() {
	p, err := load.ParsePolicy("mine.yaml", []byte(`
name: patient
preset: full-jitter
max_attempts: 12
backoff: {kind: full-jitter, base: 100ms, max: 5s}
`))
	if err != nil {
		panic(err)
	}
	// The overload schedule stays the preset's: writing backoff does not
	// change it, as in recoil.Policy.
	fmt.Println(p.Name, p.Policy.MaxAttempts, p.Policy.Backoff, p.Policy.OverloadBackoff)

	_, err = load.ParsePolicy("bad.yaml", []byte("max_attempts: 3\nbackoff:\n  kind: shaken\n"))
	fmt.Println(err)
	// Output:
	// patient 12 {100ms 0 5s} {60ms 0 10s}
	// bad.yaml:3: backoff.kind: "shaken" is not a backoff kind (want one of constant, decorrelated, equal-jitter, exponential, full-jitter, none, proportional)
}

func ExampleWriteTable() {
	ms := time.Millisecond
	load.WriteTable(os.Stdout, &load.Result{
		Policy: "immediate", URL: "http://127.0.0.1:8080/v1/messages", Callers: 4, UntilAccepted: true, Seed: 1,
		Calls: 4, OK: 4, Requests: 4, Accepted: 4, Attempts: 136, Window: 200 * ms, Peak: 40,
		AllOK: true, AllOKAt: 710 * ms, Elapsed: 711 * ms,
		Latency: load.Percentiles{Count: 4, P50: 708 * ms, P90: 710 * ms, P99: 710 * ms, Max: 710 * ms},
	})
	// Output:
	// http://127.0.0.1:8080/v1/messages — 4 callers, until accepted
	// seed 1 · peak window 200ms · attempts counted at the callers
	//
	// policy     calls  ok  failed  unfinished  attempts  per call  peak/200ms  p50    p90    p99    max    goodput/s  all ok at
	// immediate  4      4   0       0           136       34.00     40          708ms  710ms  710ms  710ms  5.63       710ms
}

// A run's jitter can be replayed: caller k of a run with seed s always
// draws from the same stream, whatever the other callers do.
func ExampleJitterSource() {
	first := func(seed uint64, caller int) uint64 { return rand.New(load.JitterSource(seed, caller)).Uint64() }
	again, other := first(7, 2), first(7, 2)
	fmt.Println("same seed, same caller:", again == other)
	fmt.Println("same seed, another caller:", first(7, 2) == first(7, 3))
	// Output:
	// same seed, same caller: true
	// same seed, another caller: false
}

// A policy kept in a file next to the load test; it takes the file's name,
// as it does not name itself.
func ExampleLoadPolicy() {
	dir, err := os.MkdirTemp("", "policies")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "patient.yaml")
	if err := os.WriteFile(path, []byte("preset: full-jitter\nmax_attempts: 12\n"), 0o644); err != nil {
		panic(err)
	}
	p, err := load.LoadPolicy(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name, p.Policy.MaxAttempts)
	// Output: patient 12
}

// A policy built in Go rather than read from a file, and one that does not
// validate: its error says which field is wrong.
func ExampleNewPolicy() {
	p, err := load.NewPolicy(&policyspec.Spec{
		Name:        "two-tries",
		MaxAttempts: 2,
		Backoff:     &policyspec.Backoff{Kind: policyspec.BackoffConstant, Base: 250 * time.Millisecond},
	})
	fmt.Println(p.Name, p.Policy.MaxAttempts, err)

	_, err = load.NewPolicy(&policyspec.Spec{Name: "broken", Backoff: &policyspec.Backoff{Kind: policyspec.BackoffExponential}})
	var pe *load.PolicyError
	fmt.Println(errors.As(err, &pe), err)
	// Output:
	// two-tries 2 <nil>
	// true backoff.base: must be positive
}

// A policy file's fallback chain names the upstreams its targets reach;
// WithUpstreams gives each name a base URL (recoil load -upstream) and
// returns the policy, with fresh state, ready to run.
func ExamplePolicy_WithUpstreams() {
	p, err := load.ParsePolicy("chain.yaml", []byte("fallback: {targets: [primary, backup]}\n"))
	if err != nil {
		panic(err)
	}
	fmt.Println("needs URLs for:", p.Upstreams())
	p, err = p.WithUpstreams(map[string]string{
		"primary": "http://127.0.0.1:8080/primary",
		"backup":  "http://127.0.0.1:8080/backup",
	})
	fmt.Println(err, len(p.Policy.Fallback.Targets))
	// Output:
	// needs URLs for: [primary backup]
	// <nil> 2
}

// A run counts the attempts that got no response by kind, read from the
// error's type and what it wraps, never its message.
func ExampleTransportErrorKind() {
	for _, err := range []error{
		&url.Error{Op: "Post", URL: "http://127.0.0.1:1/v1/messages", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}},
		&url.Error{Op: "Post", URL: "http://api.invalid/v1/messages", Err: &net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}},
		&url.Error{Op: "Post", URL: "http://10.0.0.9/v1/messages", Err: context.DeadlineExceeded},
		fmt.Errorf("read response: %w", io.ErrUnexpectedEOF),
		errors.New("something else"),
	} {
		fmt.Println(load.TransportErrorKind(err))
	}
	// Output:
	// connection refused
	// DNS lookup failed
	// timeout
	// connection reset
	// other
}

// The notes say what the table has no room for: why calls stopped, the
// statuses the attempts got, and the errors of those that got none.
func ExampleWriteNotes() {
	load.WriteNotes(os.Stdout, &load.Result{
		Policy: "default", Calls: 10, OK: 7, Failed: 3, Requests: 10, Accepted: 7, Attempts: 19,
		Stops:               map[string]int{"attempts exhausted": 2, "circuit open": 1},
		Statuses:            map[int]int64{0: 2, 200: 7, 503: 10},
		TransportErrors:     map[string]int64{load.TransportRefused: 2},
		FirstTransportError: "dial tcp 127.0.0.1:8080: connect: connection refused",
	})
	// Output:
	// default: 10 logical requests, 7 accepted; not accepted: attempts exhausted 2, circuit open 1; attempts by status: 200 7, 503 10, no response 2; why no response: connection refused 2 (first: dial tcp 127.0.0.1:8080: connect: connection refused)
}
