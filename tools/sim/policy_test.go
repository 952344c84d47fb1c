package sim

import (
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
)

// layers returns a three-layer path: a mobile SDK calling a gateway calling a
// service calling a database that fails every request, each layer with the
// policy p (the compared one).
func layers(calls int, p PolicySpec) *Scenario {
	return &Scenario{
		Name:     "layers",
		Policies: []PolicySpec{p},
		Services: []ServiceSpec{
			{Name: "gateway", Calls: "service"},
			{Name: "service", Calls: "db"},
			{Name: "db", Service: Constant(time.Millisecond), Failure: 1},
		},
		Clients: []ClientSpec{{Name: "mobile", Target: "gateway", Callers: 1, Calls: calls}},
	}
}

// TestLayersMultiply: retries compose by multiplication — three attempts at
// each of three layers are 27 requests to the database (docs/why.md,
// section 2) — and the
// hop protocol collapses the product to one budget: 1 + the edge's retries.
func TestLayersMultiply(t *testing.T) {
	none := &policyspec.Budget{Kind: policyspec.BudgetNone}
	at := &policyspec.Backoff{Kind: policyspec.BackoffNone}
	tests := []struct {
		name string
		p    PolicySpec
		want int64 // database attempts per call
	}{
		{"3 attempts per layer", PolicySpec{Name: "3", MaxAttempts: 3, Backoff: at, Budget: none}, 27},
		{"2 attempts per layer", PolicySpec{Name: "2", MaxAttempts: 2, Backoff: at, Budget: none}, 8},
		{"3 per layer, hop budget 2", PolicySpec{Name: "hop", MaxAttempts: 3, Backoff: at, Budget: none, Hop: 2}, 3},
		{"3 per layer, hop budget 5", PolicySpec{Name: "hop", MaxAttempts: 3, Backoff: at, Budget: none, Hop: 5}, 6},
		{"5 per layer, hop budget 1", PolicySpec{Name: "hop", MaxAttempts: 5, Backoff: at, Budget: none, Hop: 1}, 2},
	}
	const calls = 10
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, layers(calls, tt.p), 1).Runs[0]
			db := serviceOf(t, r, "db")
			if got := db.Arrivals; got != tt.want*calls {
				t.Errorf("database attempts for %d calls = %d, want %d each (%d)", calls, got, tt.want, tt.want*calls)
			}
			if r.Failed != calls {
				t.Errorf("failed calls = %d, want %d", r.Failed, calls)
			}
		})
	}
}

// TestPolicyKinds runs every budget, backoff and breaker a scenario can name
// against the 700 ms gateway outage, to check each is wired to the real
// recoil code: budgets and breakers that should cut attempts do.
func TestPolicyKinds(t *testing.T) {
	ms := time.Millisecond
	full := &policyspec.Backoff{Kind: policyspec.BackoffFullJitter, Base: 20 * ms}
	tests := []struct {
		name        string
		p           PolicySpec
		maxAttempts int64 // at the gateway, for 50 callers
		minAttempts int64
	}{
		{"no budget", PolicySpec{MaxAttempts: 20, Backoff: full, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}, 1000, 300},
		{"default budget", PolicySpec{MaxAttempts: 20, Backoff: full}, 400, 50},
		{"token bucket", PolicySpec{MaxAttempts: 20, Backoff: full, Budget: &policyspec.Budget{Kind: policyspec.BudgetTokenBucket, MaxTokens: 4, TokenRatio: 0.5}}, 200, 50},
		{"ratio", PolicySpec{MaxAttempts: 20, Backoff: full, Budget: &policyspec.Budget{Kind: policyspec.BudgetRatio, Percent: 0.1, MinRetriesPerSec: 1, TTL: time.Second}}, 200, 50},
		{"quota", PolicySpec{MaxAttempts: 20, Backoff: full, Budget: &policyspec.Budget{Kind: policyspec.BudgetQuota, Capacity: 10, RetryCost: 5}}, 200, 50},
		// The SRE book's throttle counts requests at once and accepts only
		// when answers come back, so 50 callers starting together meet a
		// rejection probability of n/(n+1) after the first few: a burst at
		// a cold throttle is mostly refused locally.
		{"adaptive", PolicySpec{MaxAttempts: 20, Backoff: full, Budget: &policyspec.Budget{Kind: policyspec.BudgetAdaptive, K: 1.1}}, 49, 1},
		{"breaker", PolicySpec{MaxAttempts: 20, Backoff: full, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}, Breaker: &policyspec.Breaker{ConsecutiveFailures: 3, Open: time.Second}}, 200, 50},
		// One slot shared by 50 callers with no queue: most are shed.
		{"limit", PolicySpec{MaxAttempts: 20, Backoff: full, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}, Limit: 1}, 49, 1},
		{"exponential", PolicySpec{MaxAttempts: 20, Backoff: &policyspec.Backoff{Kind: policyspec.BackoffExponential, Base: 20 * ms, Max: time.Second}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}, 1000, 50},
		{"equal", PolicySpec{MaxAttempts: 20, Backoff: &policyspec.Backoff{Kind: policyspec.BackoffEqualJitter, Base: 20 * ms}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}, 1000, 50},
		{"decorrelated", PolicySpec{MaxAttempts: 20, Backoff: &policyspec.Backoff{Kind: policyspec.BackoffDecorrelated, Base: 20 * ms, Max: time.Second}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}, 1000, 50},
		{"proportional", PolicySpec{MaxAttempts: 20, Backoff: &policyspec.Backoff{Kind: policyspec.BackoffProportional, Base: 20 * ms, Jitter: 0.5}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}, 1000, 50},
		{"constant", PolicySpec{MaxAttempts: 20, Backoff: &policyspec.Backoff{Kind: policyspec.BackoffConstant, Base: 20 * ms}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}, 1000, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.Name = tt.name
			s := &Scenario{
				Name:     "kinds",
				Policies: []PolicySpec{tt.p},
				Services: []ServiceSpec{{Name: "gateway", Service: Constant(12 * ms), FailTime: Constant(12 * ms),
					Outages: []Outage{{Duration: 700 * ms}}}},
				Clients: []ClientSpec{{Name: "callers", Target: "gateway", Callers: 50, Calls: 1, SharedPolicy: true}},
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			r := run(t, s, 1).Runs[0]
			if r.Attempts < tt.minAttempts || r.Attempts > tt.maxAttempts {
				t.Errorf("attempts = %d, want in [%d, %d]", r.Attempts, tt.minAttempts, tt.maxAttempts)
			}
			if r.Succeeded+r.Failed != 50 {
				t.Errorf("%d succeeded + %d failed, want 50 calls ended", r.Succeeded, r.Failed)
			}
			t.Logf("attempts %d, succeeded %d, failed %v", r.Attempts, r.Succeeded, r.Clients[0].FailedBy)
		})
	}
}

// TestClassify: the five-attempt wrapper retries a validator's 400; recoil's
// classification does not; "timeouts" retries only the caller's timeouts.
func TestClassify(t *testing.T) {
	tests := []struct {
		mode string
		want int64 // attempts per call
	}{
		{policyspec.ClassifyRetryEverything, 5}, {policyspec.ClassifyDefault, 1}, {"", 1}, {policyspec.ClassifyTimeouts, 1},
	}
	for _, tt := range tests {
		s := &Scenario{
			Name:     "classify",
			Policies: []PolicySpec{{Name: "p", MaxAttempts: 5, Classify: tt.mode, Backoff: &policyspec.Backoff{Kind: policyspec.BackoffExponential, Base: time.Second}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}},
			Services: []ServiceSpec{{Name: "provider", Service: Constant(210 * time.Millisecond), Reject: []string{"broken"}}},
			Clients:  []ClientSpec{{Name: "broken", Target: "provider", Callers: 1, Calls: 3}},
		}
		r := run(t, s, 1).Runs[0]
		if got := r.Attempts; got != 3*tt.want {
			t.Errorf("classify %q: %d attempts for 3 calls, want %d", tt.mode, got, 3*tt.want)
		}
		if tt.mode == policyspec.ClassifyRetryEverything {
			// The wrapper: 1+2+4+8 = 15 s asleep plus five 210 ms attempts.
			if got, want := r.Latency.Max, 15*time.Second+5*210*time.Millisecond; got < want-want/100 || got > want+want/100 {
				t.Errorf("wrapper call held %v, want %v", got, want)
			}
		}
	}
}

// TestThrottledWaits: a 429's Retry-After, to the next minute, is honoured
// by recoil's classification (the retry lands in the next minute) and
// ignored by the wrapper (which retries on its own schedule into more 429s).
func TestThrottledWaits(t *testing.T) {
	mk := func(mode string) *Scenario {
		return &Scenario{
			Name:     "429",
			Duration: 5 * time.Minute,
			Policies: []PolicySpec{{Name: "p", MaxAttempts: 5, Classify: mode, Backoff: &policyspec.Backoff{Kind: policyspec.BackoffExponential, Base: time.Second}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}},
			Services: []ServiceSpec{{Name: "provider", Service: Constant(100 * time.Millisecond), Allowance: 10.0 / 60}},
			Clients:  []ClientSpec{{Name: "c", Target: "provider", Callers: 12, Calls: 1}},
		}
	}
	honour := run(t, mk(policyspec.ClassifyDefault), 1).Runs[0]
	wrapper := run(t, mk(policyspec.ClassifyRetryEverything), 1).Runs[0]
	if honour.Succeeded != 12 {
		t.Errorf("honouring Retry-After: %d of 12 through, want all (two in the second minute)", honour.Succeeded)
	}
	if p := serviceOf(t, honour, "provider"); p.Throttled != 2 {
		t.Errorf("honouring Retry-After: %d 429s, want 2 (one each for the two over the allowance)", p.Throttled)
	}
	if p := serviceOf(t, wrapper, "provider"); p.Throttled <= 2 || wrapper.Succeeded == 12 {
		t.Errorf("wrapper: %d 429s, %d through; want more 429s and some calls lost", p.Throttled, wrapper.Succeeded)
	}
}
