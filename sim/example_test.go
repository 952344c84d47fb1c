package sim_test

import (
	"context"
	"fmt"
	"time"

	"github.com/recoil-go/recoil/policyspec"
	"github.com/recoil-go/recoil/sim"
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
