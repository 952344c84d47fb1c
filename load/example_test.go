package load_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/recoil-go/recoil/gateway"
	"github.com/recoil-go/recoil/load"
)

// Four callers against a gateway on loopback, each needing one request
// through; the gateway counts on arrival what the callers counted as they
// sent.
func ExampleRun() {
	g := gateway.New(gateway.Config{})
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
	for _, name := range load.Presets {
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
	// default      the recoil default: classified, 3 attempts, full jitter, A6 budget, breaker (1 s open)
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
