package sim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/sim"
)

// Four callers against a gateway that is down for 700 ms, under two retry
// loops — retrying every 20 ms, and backing off with full jitter — counted
// from the gateway's side.
func Example() {
	none := &policyspec.Budget{Kind: policyspec.BudgetNone}
	s := &sim.Scenario{
		Name: "gateway-outage",
		Policies: []sim.PolicySpec{
			{Name: "immediate 20ms", MaxAttempts: 1000, Budget: none,
				Backoff: &policyspec.Backoff{Kind: policyspec.BackoffConstant, Base: 20 * time.Millisecond}},
			{Name: "exp+full jitter 60ms", MaxAttempts: 1000, Budget: none,
				Backoff: &policyspec.Backoff{Kind: policyspec.BackoffFullJitter, Base: 60 * time.Millisecond}},
		},
		Services: []sim.ServiceSpec{{
			Name:     "gateway",
			Service:  sim.Constant(12 * time.Millisecond),
			FailTime: sim.Constant(12 * time.Millisecond),
			Outages:  []sim.Outage{{Duration: 700 * time.Millisecond}},
		}},
		Clients: []sim.ClientSpec{{Name: "callers", Target: "gateway", Callers: 4, Calls: 1}},
	}
	res, err := sim.Run(context.Background(), s, sim.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Runs {
		fmt.Printf("%s: %d of %d through, %d attempts, at most %d in one 200ms window\n",
			r.Policy, r.Succeeded, r.Calls, r.Attempts, r.Peak)
	}
	// Output:
	// immediate 20ms: 4 of 4 through, 92 attempts, at most 28 in one 200ms window
	// exp+full jitter 60ms: 4 of 4 through, 26 attempts, at most 14 in one 200ms window
}

// A broken scenario file is reported with its file, line and field.
func ExampleParse() {
	_, err := sim.Parse("my-outage.yaml", []byte(`name: my-outage
services:
  - name: gateway
    workers: 8
    service: {dist: exponential, mean: 12}
clients:
  - {name: callers, target: gateway, callers: 4, calls: 1}
`))
	fmt.Println(err)
	// Output:
	// my-outage.yaml:5: services[gateway].service.mean: want a duration such as 200ms or 1m30s, got "12"
}

// A fixed service time makes queueing easy to see: one worker, 50 ms a
// request, and four callers who arrive together wait their turn.
func ExampleConstant() {
	s := &sim.Scenario{
		Policies: []sim.PolicySpec{{Name: "default"}},
		Services: []sim.ServiceSpec{{Name: "db", Workers: 1, Service: sim.Constant(50 * time.Millisecond)}},
		Clients:  []sim.ClientSpec{{Name: "reports", Target: "db", Callers: 4, Calls: 1}},
	}
	res, err := sim.Run(context.Background(), s, sim.Options{})
	if err != nil {
		panic(err)
	}
	l := res.Runs[0].Latency
	fmt.Println(l.Count, "calls, mean", l.Mean.Round(time.Millisecond), "slowest", l.Max)
	// Output:
	// 4 calls, mean 125ms slowest 200ms
}

// An exponential service time has the same mean as a constant one but a
// long tail: a few requests take several times the mean.
func ExampleExponential() {
	for _, d := range []sim.Dist{sim.Constant(50 * time.Millisecond), sim.Exponential(50 * time.Millisecond)} {
		s := &sim.Scenario{
			Duration: time.Minute,
			Policies: []sim.PolicySpec{{Name: "default"}},
			Services: []sim.ServiceSpec{{Name: "search", Service: d}},
			Clients:  []sim.ClientSpec{{Name: "users", Target: "search", Rate: 20}},
		}
		res, err := sim.Run(context.Background(), s, sim.Options{Seed: 1})
		if err != nil {
			panic(err)
		}
		l := res.Runs[0].Latency
		fmt.Printf("%-11s mean %v, p99 %v\n", d.Kind, l.Mean.Round(time.Millisecond), l.P99.Round(time.Millisecond))
	}
	// Output:
	// constant    mean 50ms, p99 50ms
	// exponential mean 49ms, p99 246ms
}

// A sweep runs the same world at each value of one field: here more and
// more callers against eight workers with room for eight more in the
// queue. Past sixteen, the overflow is refused and retried.
func ExampleRun() {
	s := &sim.Scenario{
		Policies: []sim.PolicySpec{{Name: "default"}},
		Services: []sim.ServiceSpec{{Name: "api", Workers: 8, Queue: 8, Service: sim.Constant(100 * time.Millisecond)}},
		Clients:  []sim.ClientSpec{{Name: "callers", Target: "api", Callers: 4, Calls: 1}},
		Sweep:    &sim.Sweep{Path: "clients[callers].callers", Values: []string{"8", "16", "32"}},
	}
	res, err := sim.Run(context.Background(), s, sim.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	for _, r := range res.Runs {
		fmt.Printf("%s callers: %d of %d through, %d attempts\n", r.SweepValue, r.Succeeded, r.Calls, r.Attempts)
	}
	// Output:
	// 8 callers: 8 of 8 through, 8 attempts
	// 16 callers: 16 of 16 through, 16 attempts
	// 32 callers: 32 of 32 through, 49 attempts
}

// A scenario kept in a file. A mistake in it is an *Error with the file,
// the line and the field: an open-loop client needs a duration to send for.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "scenarios")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "checkout.yaml")
	if err := os.WriteFile(path, []byte(`name: checkout
duration: 10m
policies:
  - {name: default}
services:
  - {name: payments, workers: 4, service: 80ms}
clients:
  - {name: shoppers, target: payments, rate: 30/s}
`), 0o644); err != nil {
		panic(err)
	}
	s, err := sim.Load(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, s.Duration, s.Services[0].Workers, s.Clients[0].Rate)

	bad := filepath.Join(dir, "no-duration.yaml")
	if err := os.WriteFile(bad, []byte("services: [{name: payments}]\nclients: [{name: shoppers, target: payments, rate: 30/s}]\n"), 0o644); err != nil {
		panic(err)
	}
	_, err = sim.Load(bad)
	var se *sim.Error
	if errors.As(err, &se) {
		fmt.Printf("line %d, %s: %v\n", se.Line, se.Field, se.Err)
	}
	// Output:
	// checkout 10m0s 4 30/s
	// line 1, duration: an open-loop client (shoppers) needs the scenario's duration
}

// Rates are written with their unit, as an allowance is published.
func ExampleParseRate() {
	for _, in := range []string{"140/min", "2.5/s", "3600/h", "12", "fast"} {
		r, err := sim.ParseRate(in)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-7s = %.4g per second, written %v\n", in, float64(r), r)
	}
	// Output:
	// 140/min = 2.333 per second, written 140/min
	// 2.5/s   = 2.5 per second, written 150/min
	// 3600/h  = 1 per second, written 1/s
	// 12      = 12 per second, written 12/s
	// rate "fast" is not a number per unit, such as 140/min
}
