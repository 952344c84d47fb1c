package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
)

func runOf(t *testing.T, res *Result, policy, sweep string) RunResult {
	t.Helper()
	for _, r := range res.Runs {
		if r.Policy == policy && r.SweepValue == sweep {
			return r
		}
	}
	t.Fatalf("no run of %q at %q", policy, sweep)
	return RunResult{}
}

// answered is the share of a client's finished calls that succeeded.
func answered(c ClientResult) float64 {
	return float64(c.Succeeded) / float64(c.Succeeded+c.Failed)
}

func perCall(c ClientResult) float64 { return float64(c.Attempts) / float64(c.Calls) }

// TestFallbackChainScenario pins what scenarios/fallback-chain.yaml says:
// for the ten minutes the primary fails (overloaded, a retired model, a
// spent quota), recoil's chain answers at least 99 % of the calls with
// every call within the policy's three attempts, and one attempt a call on
// average; the gateways' chain, three attempts per target, answers as
// many with twice the attempts, more than three for some calls, most of
// them sent to the primary while it cannot answer; without a fallback
// every call in those ten minutes fails.
func TestFallbackChainScenario(t *testing.T) {
	t.Parallel()
	res := runShipped(t, "fallback-chain", 1)
	none := runOf(t, res, "no fallback", "")
	chain := runOf(t, res, "recoil chain, 3 attempts in all", "")
	gw := runOf(t, res, "3 attempts per target (gateway)", "")
	c, g, n := clientOf(t, chain, "app"), clientOf(t, gw, "app"), clientOf(t, none, "app")
	for _, x := range []struct {
		name string
		c    ClientResult
	}{{"recoil chain", c}, {"gateway chain", g}} {
		t.Logf("%s: answered %.2f%%, %.2f attempts a call, at most %d in a call", x.name, 100*answered(x.c), perCall(x.c), x.c.MostAttempts)
	}
	if answered(c) < 0.99 || float64(c.Succeeded) < 0.99*float64(c.Calls) {
		t.Errorf("recoil's chain answered %d of %d calls (%d finished): want at least 99 %%", c.Succeeded, c.Calls, c.Succeeded+c.Failed)
	}
	if c.MostAttempts > 3 || perCall(c) > 1.05 {
		t.Errorf("recoil's chain made up to %d attempts a call, %.2f on average: want at most 3 (max_attempts), about 1", c.MostAttempts, perCall(c))
	}
	if answered(g) < 0.99 || g.MostAttempts <= 3 || perCall(g) < 1.8*perCall(c) {
		t.Errorf("the gateways' chain answered %.2f%%, up to %d attempts a call, %.2f on average; want as many answered, past 3 attempts for some calls and nearly twice recoil's %.2f",
			100*answered(g), g.MostAttempts, perCall(g), perCall(c))
	}
	if answered(n) > 0.5 || n.Failed < 5900 {
		t.Errorf("without a fallback %d calls failed (%.2f%% answered): want the ten minutes' 6,000 lost", n.Failed, 100*answered(n))
	}
	// What the primary was sent while it could not answer: a probe every
	// cooldown under recoil's chain, every call (three times while it was
	// overloaded) under the gateways'.
	failedAt := func(r RunResult) int64 {
		s := serviceOf(t, r, "primary")
		return s.Arrivals - s.Succeeded
	}
	if fc, fg := failedAt(chain), failedAt(gw); fc > 100 || fg < 9000 {
		t.Errorf("the primary failed %d attempts of recoil's chain and %d of the gateways'; want a few dozen against thousands", fc, fg)
	}
	// Every kind of failure the scenario promises reached the gateways'
	// chain, and the refusals moved it on at once, one attempt each.
	if f := serviceOf(t, gw, "primary").Failures; f["404"] == 0 || f["429 quota"] == 0 || f["overloaded"] < 3*f["404"]/2 {
		t.Errorf("the primary's failures under the gateways' chain = %v: want 404s, quota refusals and three 529s a call while overloaded", f)
	}
}

// TestSlowTailHedgeScenario pins what scenarios/slow-tail-hedge.yaml says
// at two of its rates. At 50 calls a second the backend is slow, not
// busy: the hedge at the p95 cuts the p99 by more than half for at most
// 10 % more attempts, and the attempts it abandons are served for nobody.
// At 250, past the capacity, the budget holds the hedges to its share (at
// most a fifth of the calls answered, plus its reserve), more refused than
// started, the attempts per call as without a hedge.
func TestSlowTailHedgeScenario(t *testing.T) {
	t.Parallel()
	s := builtin(t, "slow-tail-hedge")
	if !long() {
		s.Sweep.Values = []string{"50", "250"}
	}
	res := run(t, s, 1)
	slow := func(p string) (RunResult, ClientResult) {
		r := runOf(t, res, p, "50")
		return r, clientOf(t, r, "app")
	}
	rn, cn := slow("no hedge")
	rh, ch := slow("hedge at p95")
	t.Logf("at 50/s: p99 %v → %v, attempts %d → %d, hedges %d, abandoned at the backend %d",
		rn.Latency.P99, rh.Latency.P99, cn.Attempts, ch.Attempts, ch.Hedges, serviceOf(t, rh, "search").Abandoned)
	if rh.Latency.P99 > rn.Latency.P99/2 {
		t.Errorf("at 50/s the hedge made the p99 %v from %v: want it cut by at least half", rh.Latency.P99, rn.Latency.P99)
	}
	if float64(ch.Attempts) > 1.10*float64(cn.Attempts) || ch.Hedges == 0 {
		t.Errorf("at 50/s the hedge sent %d attempts (%d hedges) against %d: want at most 10 %% more", ch.Attempts, ch.Hedges, cn.Attempts)
	}
	if a := serviceOf(t, rh, "search").Abandoned; ch.Wasted == 0 || a == 0 || a > ch.Wasted {
		t.Errorf("at 50/s %d attempts were abandoned by the call and %d served for nobody: want the losers counted at the backend", ch.Wasted, a)
	}
	over := func(p string) ClientResult { return clientOf(t, runOf(t, res, p, "250"), "app") }
	on, ob, off := over("no hedge"), over("hedge at p95"), over("hedge at p95, no budget")
	t.Logf("at 250/s: hedges %d (refused %d) with the budget, %d without; attempts a call %.2f, %.2f, %.2f",
		ob.Hedges, ob.RefusedHedges, off.Hedges, perCall(on), perCall(ob), perCall(off))
	if float64(ob.Hedges) > 0.2*float64(ob.Succeeded)+10 || ob.RefusedHedges <= ob.Hedges || ob.Hedges*3 > off.Hedges {
		t.Errorf("at 250/s the budget let %d hedges through (%d refused) for %d answers, against %d without it: want at most a fifth of the answers, more refused than started",
			ob.Hedges, ob.RefusedHedges, ob.Succeeded, off.Hedges)
	}
	if perCall(ob) > 1.02*perCall(on) || perCall(off) < 1.5*perCall(on) {
		t.Errorf("at 250/s attempts a call: %.2f hedging with the budget, %.2f without one, %.2f not hedging; want the first as not hedging, the second far above",
			perCall(ob), perCall(off), perCall(on))
	}
}

// TestChainRoutesAttempts: on a small chain whose first service is
// overloaded, recoil's chain sends each call's second attempt, at once, to
// the second service, and later calls straight there while the first
// cools down; the gateways' chain gives the first service all of a call's
// three attempts, with their waits, before it tries the second.
func TestChainRoutesAttempts(t *testing.T) {
	const src = `name: chain
duration: 1m
services:
  - name: a
    service: 10ms
    outages: [{start: 0s, duration: 1h, class: overloaded}]
  - name: b
    service: 10ms
clients:
  - name: c
    target: a
    callers: 1
    calls: 5
    think: 1s
    policy:
      max_attempts: 3
      budget: none
      overload_backoff: {kind: constant, base: 100ms}
      fallback: {targets: [a, b], cooldown: 2s}
`
	s, err := Parse("chain.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, s, 1).Runs[0]
	c := clientOf(t, r, "c")
	// Calls at 0, 1, 2, 3 and 4 s, each 10 ms: the first cools a for 2 s,
	// the third (at about 2.02 s) finds it cooled down, probes it and
	// cools it again, and so does the fifth.
	if c.Succeeded != 5 || serviceOf(t, r, "a").Arrivals != 3 || serviceOf(t, r, "b").Arrivals != 5 || c.MostAttempts != 2 || r.Latency.Max != 10*time.Millisecond {
		t.Errorf("recoil's chain: %d of 5 calls through, %d attempts at a and %d at b, at most %d a call, slowest %v; want 5, 3, 5, 2, 10ms",
			c.Succeeded, serviceOf(t, r, "a").Arrivals, serviceOf(t, r, "b").Arrivals, c.MostAttempts, r.Latency.Max)
	}
	s.Clients[0].Policy.Spec.Fallback.Retries = "per-target"
	r = run(t, s, 1).Runs[0]
	c = clientOf(t, r, "c")
	if c.Succeeded != 5 || serviceOf(t, r, "a").Arrivals != 15 || serviceOf(t, r, "b").Arrivals != 5 || c.MostAttempts != 4 || r.Latency.Max != 210*time.Millisecond {
		t.Errorf("the gateways' chain: %d of 5 calls through, %d attempts at a and %d at b, at most %d a call, slowest %v; want 5, 15, 5, 4, 210ms",
			c.Succeeded, serviceOf(t, r, "a").Arrivals, serviceOf(t, r, "b").Arrivals, c.MostAttempts, r.Latency.Max)
	}
}

// TestHedgeLosersAtTheService: the attempt a hedge beats is served for
// nobody — abandoned — unless the service notices its caller left, and
// then it is cancelled. One caller, one worker per copy: a 1 s request
// hedged after 100 ms by a copy the tail spares.
func TestHedgeLosersAtTheService(t *testing.T) {
	const src = `name: hedge
duration: 1m
services:
  - name: s
    service: 10ms
    tail: {share: 100%, service: 1s}
clients:
  - name: c
    target: s
    callers: 1
    calls: 1
    policy: {budget: none, hedge: {delay: 100ms}}
`
	for _, cancel := range []bool{false, true} {
		s, err := Parse("hedge.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		s.Services[0].CancelOnAbandon = cancel
		r := run(t, s, 1).Runs[0]
		c, svc := clientOf(t, r, "c"), serviceOf(t, r, "s")
		// Every request is in the tail: the hedge at 100 ms takes 1 s too,
		// and the first answers at 1 s; the hedge is the loser.
		if c.Succeeded != 1 || c.Attempts != 2 || c.Hedges != 1 || c.Wasted != 1 || r.Latency.Max != time.Second {
			t.Errorf("cancel %v: %d through, %d attempts, %d hedges, %d wasted, %v; want 1, 2, 1, 1, 1s", cancel, c.Succeeded, c.Attempts, c.Hedges, c.Wasted, r.Latency.Max)
		}
		if cancel && (svc.Abandoned != 0 || svc.Failures["cancelled"] != 1) || !cancel && (svc.Abandoned != 1 || svc.Succeeded != 2) {
			t.Errorf("cancel %v: the service served %d for nobody and cancelled %d", cancel, svc.Abandoned, svc.Failures["cancelled"])
		}
	}
}

// TestRouteErrors: a chain's targets must reach services of the scenario,
// and an outage's new classes and a tail are checked like every other
// field, with the file, the line and the field.
func TestRouteErrors(t *testing.T) {
	const head = "name: x\nduration: 1m\nservices:\n  - name: a\n  - name: b\n"
	const client = "clients:\n  - name: c\n    target: a\n    rate: 1/s\n"
	tests := []struct {
		name, src, want string
	}{
		{"a target with no service", head + client + "policies:\n  - name: p\n    fallback:\n      targets:\n        - a\n        - z\n",
			`x.yaml:15: policies[p].fallback.targets[1].name: no service named "z" for the target to reach: name one, or give the target an upstream`},
		{"an upstream with no service", head + client + "policies:\n  - name: p\n    fallback:\n      targets:\n        - {name: a}\n        - {name: second, upstream: zz}\n",
			`x.yaml:15: policies[p].fallback.targets[1].upstream: no service named "zz"`},
		{"a client's own chain", head + "clients:\n  - name: c\n    target: a\n    rate: 1/s\n    policy:\n      fallback: {targets: [a, nowhere]}\n",
			`x.yaml:11: clients[c].policy.fallback.targets[1].name: no service named "nowhere" for the target to reach: name one, or give the target an upstream`},
		{"a policy's own error first", head + client + "policies:\n  - name: p\n    fallback:\n      targets: [a, a]\n",
			`x.yaml:13: policies[p].fallback.targets[1].name: target "a" is listed twice (first as target 1)`},
		{"a hedge's quantile", head + client + "policies:\n  - name: p\n    hedge: {quantile: 95}\n",
			"x.yaml:12: policies[p].hedge.quantile: must be in [0, 1): 0.95 races the slowest 5 %; 0 means the fixed delay"},
		{"an unknown class", "name: x\nduration: 1m\nservices:\n  - name: a\n    outages:\n      - {start: 0s, duration: 1s, class: gone}\n" + client + "policies: [{name: p}]\n",
			`x.yaml:6: services[a].outages[0].class: unknown class "gone" (want transient, overloaded, drop, slow, not-found, unauthorized or quota)`},
		{"a tail's share", "name: x\nduration: 1m\nservices:\n  - name: a\n    tail:\n      share: 0\n      service: 1s\n" + client + "policies: [{name: p}]\n",
			"x.yaml:6: services[a].tail.share: must be a share in (0, 1], such as 3%"},
		{"a tail's service time", "name: x\nduration: 1m\nservices:\n  - name: a\n    tail: {share: 1%}\n" + client + "policies: [{name: p}]\n",
			"x.yaml:5: services[a].tail.service: missing: the tail's service time, such as {dist: uniform, min: 1s, max: 3s}"},
		{"a record's tail", "name: x\nduration: 1m\nservices:\n  - name: a\n    kind: record\n    latency: 1ms\n    tail: {share: 1%, service: 1s}\n" + client + "policies: [{name: p}]\n",
			"x.yaml:7: services[a].tail: a record has no service time to slow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.src))
			var e *Error
			if !errors.As(err, &e) || err.Error() != tt.want {
				t.Errorf("Parse =\n%v\nwant\n%s\n%s", err, tt.want, numbered(tt.src))
			}
		})
	}
	// A chain built in Go is checked against the services too.
	s := &Scenario{Name: "x", Duration: time.Minute, Services: []ServiceSpec{{Name: "a"}},
		Clients:  []ClientSpec{{Name: "c", Target: "a", Rate: 1}},
		Policies: []PolicySpec{{Name: "p", Fallback: &policyspec.Fallback{Targets: []policyspec.Target{{Name: "a"}, {Name: "b"}}}}}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `fallback.targets[1].name: no service named "b"`) {
		t.Errorf("Validate(chain to b) = %v, want target b refused", err)
	}
}

// TestHedgeNotOnATie: an attempt is raced once it has run longer than the
// hedge delay. When every answer takes 10 ms the p90 of them is 10 ms, and
// an attempt answering at that very instant is not raced.
func TestHedgeNotOnATie(t *testing.T) {
	const src = `name: tie
duration: 20s
services: [{name: s, workers: 4, service: 10ms}]
clients:
  - name: c
    target: s
    rate: 20/s
    policy: {hedge: {quantile: 0.9, delay: 10ms}}
`
	s, err := Parse("tie.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := clientOf(t, run(t, s, 1).Runs[0], "c")
	if c.Hedges != 0 || c.Attempts != c.Calls {
		t.Errorf("%d calls, %d attempts, %d hedges; want no hedge", c.Calls, c.Attempts, c.Hedges)
	}
}

// TestHedgeBudgetWithoutFailures: the default budget (budget.Share) charges
// a hedge as it charges a retry, so it bounds hedging even where nothing
// fails. The same backend with a queue of no bound answers no 503 when
// overloaded, only later; at 250 a second the hedge at the p95 would send
// half as many attempts again as there are calls, and the budget holds it
// to a fifth of the answers (gRFC A6's token bucket, drained only by
// failures, let every hedge through here).
func TestHedgeBudgetWithoutFailures(t *testing.T) {
	t.Parallel()
	s := builtin(t, "slow-tail-hedge")
	s.Duration = 90 * time.Second
	s.Sweep.Values = []string{"250"}
	s.Services[0].Queue = 0
	res := run(t, s, 1)
	on := clientOf(t, runOf(t, res, "no hedge", "250"), "app")
	ob := clientOf(t, runOf(t, res, "hedge at p95", "250"), "app")
	off := clientOf(t, runOf(t, res, "hedge at p95, no budget", "250"), "app")
	t.Logf("unbounded queue at 250/s: hedges %d (refused %d) with the budget, %d without; attempts a call %.2f, %.2f, %.2f",
		ob.Hedges, ob.RefusedHedges, off.Hedges, perCall(on), perCall(ob), perCall(off))
	if float64(ob.Hedges) > 0.2*float64(ob.Succeeded)+10 || perCall(ob) > 1.21*perCall(on) || perCall(off) < 1.3*perCall(on) {
		t.Errorf("with no failure the budget let %d hedges through for %d answers (%d without it), %.2f attempts a call against %.2f and %.2f: want at most a fifth of the answers",
			ob.Hedges, ob.Succeeded, off.Hedges, perCall(ob), perCall(on), perCall(off))
	}
}

// FuzzRoute: whatever policy the language accepts — a chain of either
// kind, a hedge, both, with a budget, a breaker, a limit, timeouts — a run
// of it against two flaky services ends, every call it began counted as
// through, failed or unfinished, and no call of a chain under one bound
// makes more attempts than the bound.
func FuzzRoute(f *testing.F) {
	f.Add([]byte("fallback: {targets: [a, b]}\n"))
	f.Add([]byte("fallback: {targets: [a, b], retries: per-target}\nmax_attempts: 2\nbackoff: none\n"))
	f.Add([]byte("hedge: {quantile: 0.5, max_hedges: 3}\nmax_attempts: 5\nattempt_timeout: 30ms\n"))
	f.Add([]byte("fallback: {targets: [a, {name: b, breaker: {consecutive_failures: 1, open: 100ms}}], cooldown: 50ms}\nhedge: {delay: 5ms}\nlimit: 2\ntimeout: 80ms\n"))
	f.Add([]byte("fallback: {targets: [b, a], retries: per-target}\nhedge: {delay: 1ms, max_hedges: 2}\nbudget: none\nhop: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := policyspec.Parse("p.yaml", data)
		if err != nil {
			return
		}
		if ps.Fallback != nil {
			for i := range ps.Fallback.Targets {
				if n := ps.Fallback.Targets[i].UpstreamName(); n != "a" && n != "b" {
					return
				}
			}
		}
		ps.Name, ps.IdleTimeout = "p", 0
		s := &Scenario{Name: "fuzz", Duration: 3 * time.Second, Policies: []PolicySpec{ps},
			Services: []ServiceSpec{
				{Name: "a", Workers: 2, Queue: 4, Service: Exponential(10 * time.Millisecond), Failure: 0.2,
					Outages: []Outage{{Start: time.Second, Duration: 500 * time.Millisecond, Class: "quota"}}},
				{Name: "b", Workers: 2, Service: Exponential(20 * time.Millisecond), Failure: 0.1,
					Tail:    &Tail{Share: 0.1, Service: Constant(200 * time.Millisecond)},
					Outages: []Outage{{Start: 2 * time.Second, Duration: 300 * time.Millisecond, Class: "overloaded"}}},
			},
			Clients: []ClientSpec{{Name: "c", Target: "a", Rate: 40}, {Name: "k", Target: "b", Callers: 3, Think: Constant(50 * time.Millisecond)}},
		}
		if err := s.Validate(); err != nil {
			return
		}
		res, err := Run(t.Context(), s, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		bound := int64(ps.MaxAttempts)
		if bound == 0 {
			bound = 3
		}
		for _, c := range res.Runs[0].Clients {
			if c.Succeeded+c.Failed+c.Unfinished != c.Calls {
				t.Errorf("%s: %d through, %d failed, %d unfinished of %d calls", c.Name, c.Succeeded, c.Failed, c.Unfinished, c.Calls)
			}
			if !ps.Fallback.PerTarget() && c.MostAttempts > bound {
				t.Errorf("%s: a call made %d attempts under max_attempts %d", c.Name, c.MostAttempts, bound)
			}
		}
	})
}
