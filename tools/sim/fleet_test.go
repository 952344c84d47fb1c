package sim

import "testing"

// TestFleetBudget pins what scenarios/fleet-budget.yaml says its table
// shows: with one budget for the fleet the provider's load does not move
// as the fleet grows and the allowance holds; with a budget per replica
// the retries, the 429s (search's too) and the busiest window grow with
// the replica count. The figures are the seed-1 run's, exact: the
// simulator is deterministic.
func TestFleetBudget(t *testing.T) {
	t.Parallel()
	r := runShipped(t, "fleet-budget", 1)
	type row struct {
		attempts, peak, throttled, searchThrottled, searchOK int64
	}
	const perReplica, fleet = "budget per replica", "one budget for the fleet"
	want := map[string]row{
		"1 " + perReplica:  {31453, 39, 0, 0, 6160},
		"1 " + fleet:       {31453, 39, 0, 0, 6160},
		"5 " + perReplica:  {36869, 171, 3869, 1274, 5325},
		"5 " + fleet:       {31453, 39, 0, 0, 6160},
		"40 " + perReplica: {43810, 530, 10810, 3559, 3780},
		"40 " + fleet:      {31453, 39, 0, 0, 6160},
	}
	if len(r.Runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(r.Runs), len(want))
	}
	for _, run := range r.Runs {
		key := run.SweepValue + " " + run.Policy
		provider, search := serviceOf(t, run, "provider"), clientOf(t, run, "search")
		got := row{run.Attempts, run.Peak, provider.Throttled, provider.ThrottledBy["search"], search.Succeeded}
		t.Logf("%-35s %+v", key, got)
		if got != want[key] {
			t.Errorf("%s: attempts, peak, 429s, search's 429s, search's successes = %+v, want %+v", key, got, want[key])
		}
	}
}

// TestReplicasValidate: bad replica counts name the line and the field.
func TestReplicasValidate(t *testing.T) {
	base := "name: x\nduration: 1m\npolicies: [{name: p}]\nservices: [{name: s}]\nclients:\n"
	tests := []struct {
		name, client, want string
	}{
		{"negative", "  - {name: c, target: s, rate: 1/s, replicas: -1}\n", "x.yaml:6: clients[c].replicas: must not be negative (0 means 1)"},
		{"too many", "  - {name: c, target: s, rate: 1/s, replicas: 1000000}\n", "x.yaml:6: clients[c].replicas: at most 100,000"},
		{"callers with their own policies", "  - {name: c, target: s, callers: 10, replicas: 2}\n", "x.yaml:6: clients[c].replicas: a closed-loop client's callers each have their own policy; replicas needs shared_policy: true"},
		{"not a number", "  - {name: c, target: s, rate: 1/s, replicas: many}\n", `x.yaml:6: clients[c].replicas: want a whole number, got "many"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(base+tt.client))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Parse error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestReplicaBudgets: four replicas of a closed-loop client, one caller
// each, against a service that fails everything. A quota of 10 pays for two
// retries at 5 each: each replica's own quota lets the four callers retry
// eight times in all, one quota for the fleet twice.
func TestReplicaBudgets(t *testing.T) {
	tests := []struct {
		scope    string
		replicas int
		attempts int64
	}{
		{"replica", 4, 4 + 4*2},
		{"fleet", 4, 4 + 2},
		{"replica", 1, 4 + 2},
		{"fleet", 1, 4 + 2},
	}
	for _, tt := range tests {
		src := "name: x\npolicies: [{name: p, max_attempts: 10, backoff: {kind: constant, base: 1s}, budget: {kind: quota, capacity: 10, retry_cost: 5, scope: " + tt.scope + "}}]\n" +
			"services: [{name: s, service: 10ms, failure: 1}]\n" +
			"clients: [{name: c, target: s, callers: 4, calls: 1, shared_policy: true, replicas: " + itoa(tt.replicas) + "}]\n"
		s, err := Parse("x.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		r := run(t, s, 1)
		if got := r.Runs[0].Attempts; got != tt.attempts {
			t.Errorf("scope %s, %d replicas: %d attempts, want %d", tt.scope, tt.replicas, got, tt.attempts)
		}
	}
}
