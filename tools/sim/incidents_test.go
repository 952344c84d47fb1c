package sim

import (
	"strconv"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/scenarios"
	"github.com/recoil-go/recoil/tools/sim/blast"
)

// builtin parses a shipped scenario.
func builtin(t testing.TB, name string) *Scenario {
	t.Helper()
	data, err := scenarios.FS.ReadFile(name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(name+".yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func find[T any](t *testing.T, xs []T, name func(T) string, want string) T {
	t.Helper()
	for _, x := range xs {
		if name(x) == want {
			return x
		}
	}
	t.Fatalf("no %q", want)
	var zero T
	return zero
}

func serviceOf(t *testing.T, r RunResult, name string) ServiceResult {
	return find(t, r.Services, func(s ServiceResult) string { return s.Name }, name)
}

func clientOf(t *testing.T, r RunResult, name string) ClientResult {
	return find(t, r.Clients, func(c ClientResult) string { return c.Name }, name)
}

// TestBlastRadiusSharedPool runs the incident of docs/why.md, section 1: a
// validator's 400 on one endpoint, retried by the five-attempt wrapper,
// pushes the healthy endpoints into queueing (a pool of 24: the retries
// drain it) and into 429s
// (a pool of 64, large enough that the retries reach the provider in full:
// 700 + 1,450 attempts/min against 2,000); the recoil default, which makes
// one attempt at a permanent error, does neither.
func TestBlastRadiusSharedPool(t *testing.T) {
	t.Parallel()
	r := runShipped(t, "blast-radius", 1)
	for _, run := range r.Runs {
		app, provider := serviceOf(t, run, "app"), serviceOf(t, run, "provider")
		healthy := clientOf(t, run, "healthy")
		throttled := provider.ThrottledBy["healthy"]
		t.Logf("workers=%s %-20s healthy: 429s at the provider %5d, queue wait p50 %8v, max queue %5d, latency p50 %8v; provider attempts %5d",
			run.SweepValue, run.Policy, throttled, app.Wait.P50, app.MaxQueue, healthy.Latency.P50, provider.Arrivals)
		switch run.Policy {
		case "5-attempt wrapper":
			if app.Wait.P50 < 10*time.Second || app.MaxQueue < 1000 {
				t.Errorf("workers=%s wrapper: queue wait p50 = %v, max queue %d; want healthy requests queued (p50 ≥ 10s, max ≥ 1000)", run.SweepValue, app.Wait.P50, app.MaxQueue)
			}
			if healthy.Succeeded > healthy.Calls/2 {
				t.Errorf("workers=%s wrapper: healthy calls succeeded %d of %d, want most lost to upstream timeouts", run.SweepValue, healthy.Succeeded, healthy.Calls)
			}
			if run.SweepValue == "64" && throttled == 0 {
				t.Errorf("workers=64 wrapper: healthy 429s at the provider = 0, want > 0 (2,150 attempts/min against 2,000)")
			}
			if run.SweepValue == "24" && throttled != 0 {
				// The pool of 24 caps the broken endpoint at 24 calls per
				// 16 s: the allowance holds and the damage is all queueing.
				t.Errorf("workers=24 wrapper: healthy 429s = %d, want 0 (the drained pool caps the attempts)", throttled)
			}
		case "recoil default":
			if throttled != 0 || provider.Throttled != 0 {
				t.Errorf("workers=%s recoil default: 429s = %d (healthy %d), want 0", run.SweepValue, provider.Throttled, throttled)
			}
			if app.Wait.P99 > 50*time.Millisecond || app.MeanQueue > 0.1 {
				t.Errorf("workers=%s recoil default: queue wait p99 = %v, mean queue %.2f; want no queueing", run.SweepValue, app.Wait.P99, app.MeanQueue)
			}
			if healthy.Failed != 0 || healthy.Latency.P99 > 3*time.Second {
				t.Errorf("workers=%s recoil default: healthy failed %d, p99 %v; want none failed, p99 < 3s", run.SweepValue, healthy.Failed, healthy.Latency.P99)
			}
			if broken := clientOf(t, run, "broken"); broken.Attempts != broken.Calls || provider.ArrivalsBy["broken"] != broken.Calls {
				t.Errorf("workers=%s recoil default: broken endpoint made %d attempts (%d at the provider) for %d calls, want one each", run.SweepValue, broken.Attempts, provider.ArrivalsBy["broken"], broken.Calls)
			}
			// Little's law on the figures of docs/why.md, section 1: 0.49
			// workers for the broken endpoint plus 1,450/min × 0.4 s for the
			// healthy ones.
			if want := 140.0/60*0.21 + 1450.0/60*0.4; app.MeanBusy < want*0.97 || app.MeanBusy > want*1.03 {
				t.Errorf("workers=%s recoil default: mean busy = %.2f, want %.2f ± 3%%", run.SweepValue, app.MeanBusy, want)
			}
		}
	}
}

// TestGatewayOutageShape runs the 700 ms gateway outage at 4 and at 1,000
// callers: every caller gets through under every policy, and backing off
// lowers both the total attempts and the peak in a 200 ms window.
func TestGatewayOutageShape(t *testing.T) {
	t.Parallel()
	r := runShipped(t, "gateway-outage", 1)
	byPoint := map[string]map[string]RunResult{}
	for _, run := range r.Runs {
		if byPoint[run.SweepValue] == nil {
			byPoint[run.SweepValue] = map[string]RunResult{}
		}
		byPoint[run.SweepValue][run.Policy] = run
		t.Logf("callers=%-5s %-22s attempts %6d, peak %5d per 200ms, got through %d of %d (resubmitted %d), last at %v",
			run.SweepValue, run.Policy, run.Attempts, run.Peak, run.Succeeded, run.Calls, run.Resubmitted, run.Latency.Max)
		want := map[string]int64{"4": 4, "1000": 1000}[run.SweepValue]
		if run.Calls != want || run.Succeeded != want || run.Failed != 0 || run.Unfinished != 0 {
			t.Errorf("callers=%s %s: %d calls, %d got through, %d failed, %d unfinished; want all %d through",
				run.SweepValue, run.Policy, run.Calls, run.Succeeded, run.Failed, run.Unfinished, want)
		}
	}
	for point, runs := range byPoint {
		hammer := runs["immediate 20ms"]
		for _, polite := range []string{"exp+full jitter 60ms", "recoil default"} {
			p := runs[polite]
			if p.Attempts >= hammer.Attempts || p.Peak >= hammer.Peak {
				t.Errorf("callers=%s: %s made %d attempts, peak %d; want fewer than immediate's %d, peak %d",
					point, polite, p.Attempts, p.Peak, hammer.Attempts, hammer.Peak)
			}
		}
	}
}

// TestTwoHourBlip runs the two-hour-blip scenario: a failover of one
// database shard of five, under three layers that retry three times each.
// Without the hop protocol the failed-over cell collapses and stays
// collapsed long after the failover ended: the API (what the mobile SDK
// sees) fails on a fifth of requests, the cell serving several times its
// taps, for callers who have left. With it the amplification collapses to
// the edge's budget and the cell recovers.
//
// By default the failover lasts 40 s from 35 s in and the run ends 35 s
// after it, at 110 s; the cell tips over about 30 s into a failover. The
// long version (RECOIL_LONG=1) runs the shipped 90-second failover for 6
// minutes, and the same system as one cell (every pool five times the
// size, every tap through it), whose API then fails on nearly every
// request: in this model a pool's collapse is all or nothing.
func TestTwoHourBlip(t *testing.T) {
	t.Parallel()
	s := builtin(t, "two-hour-blip")
	db := &s.Services[2]
	fail := &db.Outages[0]
	if !long() {
		s.Duration, fail.Start, fail.Duration = 110*time.Second, 35*time.Second, 40*time.Second
	}
	after := s.Duration - (fail.Start + fail.Duration) // how long the run goes on after the failover
	from := s.Duration - after/2                       // the tail measured: the last half of that
	const taps, cell = 1000.0, 200.0                   // a second: all, and the failed-over cell's
	r := run(t, s, 1)
	plain, hop := r.Runs[0], r.Runs[1]
	for _, run := range r.Runs {
		svc := serviceOf(t, run, "service")
		t.Logf("%-18s API failing on %4.1f%% of taps in the last %v; the cell's service: %.0f attempts/s, %d served for nobody; calls failed %d of %d",
			run.Policy, 100*(1-tailOK(t, run, from, "gateway", "other gateways")/taps), after/2,
			tailRate(t, run, "service", from), svc.Abandoned, run.Failed, run.Calls)
	}
	// Long after the failover, a fifth of the taps fail: the failed-over
	// cell's, whose service still gets several times its 200 taps a second
	// and serves them for nobody; the other cells' calls all get through.
	if got := 1 - tailOK(t, plain, from, "gateway", "other gateways")/taps; got < 0.17 || got > 0.23 {
		t.Errorf("without hop: the API fails on %.1f%% of taps %v after the failover, want a fifth (17–23 %%)", 100*got, after/2)
	}
	if got := tailRate(t, plain, "service", from); got < 3*cell {
		t.Errorf("without hop: %.0f attempts/s at the cell's service %v after the failover, want ≥ %.0f (still collapsed)", got, after/2, 3*cell)
	}
	if svc := serviceOf(t, plain, "service"); svc.Abandoned < svc.Succeeded/2 {
		t.Errorf("without hop: %d of the cell's %d served attempts abandoned, want most", svc.Abandoned, svc.Succeeded)
	}
	if other := clientOf(t, plain, "mobile, other cells"); other.Failed != 0 {
		t.Errorf("without hop: %d of the other cells' calls failed, want none", other.Failed)
	}
	// With the hop protocol the cell recovers. (The share is against the
	// mean tap rate; the Poisson taps of 17.5 s vary by 0.75 % either way.)
	if got := 1 - tailOK(t, hop, from, "gateway", "other gateways")/taps; got > 0.02 {
		t.Errorf("with hop: the API fails on %.1f%% of taps after the failover, want under 2 %% (recovered)", 100*got)
	}
	if got := tailRate(t, hop, "service", from); got > 1.1*cell {
		t.Errorf("with hop: %.0f attempts/s at the cell's service after the failover, want its %.0f taps (recovered)", got, cell)
	}
	if hop.Goodput < 0.99*taps || float64(serviceOf(t, hop, "service").Arrivals) > 1.05*cell*(s.Duration-s.Warmup).Seconds() {
		t.Errorf("with hop: goodput %.0f/s, %d attempts at the cell's service; want recovery", hop.Goodput, serviceOf(t, hop, "service").Arrivals)
	}
	if !long() {
		return
	}
	// The same system as one cell: the collapse takes every tap.
	one := clone(s)
	one.Services = one.Services[:3]
	one.Services[1].Workers, one.Services[2].Workers = 130, 120
	one.Clients = one.Clients[:1]
	one.Clients[0].Rate = Rate(taps)
	one.Policies = one.Policies[:1]
	whole := run(t, one, 1).Runs[0]
	if got := 1 - tailOK(t, whole, from, "gateway")/taps; got < 0.95 {
		t.Errorf("one cell: the API fails on %.1f%% of taps after the failover, want nearly all", 100*got)
	}
}

// tailOK is the successes per second at the given services (a client's
// gateway: its calls that got through) from the instant from to the end of
// the run.
func tailOK(t *testing.T, r RunResult, from time.Duration, services ...string) float64 {
	var n int64
	var dt time.Duration
	for i, name := range services {
		for _, smp := range serviceOf(t, r, name).Series {
			if smp.T-smp.Dt >= from {
				n += smp.Succeeded
				if i == 0 {
					dt += smp.Dt
				}
			}
		}
	}
	if dt == 0 {
		t.Fatalf("no samples after %v", from)
	}
	return float64(n) / dt.Seconds()
}

// tailRate is the attempts per second that reached service from the
// instant from to the end of the run.
func tailRate(t *testing.T, r RunResult, service string, from time.Duration) float64 {
	var n int64
	var dt time.Duration
	for _, smp := range serviceOf(t, r, service).Series {
		if smp.T-smp.Dt >= from {
			n += smp.Arrivals
			dt += smp.Dt
		}
	}
	if dt == 0 {
		t.Fatalf("%s: no samples after %v", service, from)
	}
	return float64(n) / dt.Seconds()
}

// TestSlowProvider runs the slow-provider scenario: a provider slowing
// from 2 s to 20 s for five minutes, nothing failing. Callers that give up
// after 10 s and retry turn it into an outage of their own making: a
// quarter and more of the calls fail, the provider generates thousands of
// answers nobody receives (every copy a timeout left behind), its
// concurrency climbs far above what the slowdown alone makes, and the
// retries pass the allowance into 429s. A retry budget removes the
// duplicates and the 429s but not the failures; a timeout above the slow
// latency gets every call through with nothing generated twice.
func TestSlowProvider(t *testing.T) {
	t.Parallel()
	r := runShipped(t, "slow-provider", 1)
	const naive, budget, patient = "10s timeout, 3 attempts", "10s timeout, recoil default", "30s timeout, recoil default"
	runs := map[string]RunResult{}
	for _, run := range r.Runs {
		runs[run.Policy] = run
		p := serviceOf(t, run, "provider")
		t.Logf("%-28s %5d calls, %5d failed, %5d attempts, %4d 429s, %5d generated for nobody, %.0f requests in flight on average",
			run.Policy, run.Calls, run.Failed, p.Arrivals, p.Throttled, p.Abandoned, p.MeanBusy)
	}
	n, b, w := runs[naive], runs[budget], runs[patient]
	np, bp, wp := serviceOf(t, n, "provider"), serviceOf(t, b, "provider"), serviceOf(t, w, "provider")
	// Slow into down: the failures, the duplicates and the 429s are the
	// callers' own.
	if n.Failed < n.Calls/4 || np.Abandoned < n.Calls/2 || np.Throttled == 0 || np.MeanBusy < 1.4*wp.MeanBusy {
		t.Errorf("%s: %d of %d calls failed, %d answers for nobody, %d 429s, %.0f in flight (%.0f waiting 30 s); want ≥ a quarter failed, ≥ half a call's worth abandoned, 429s, ≥ 1.4× the concurrency",
			naive, n.Failed, n.Calls, np.Abandoned, np.Throttled, np.MeanBusy, wp.MeanBusy)
	}
	// The budget: one attempt a call, no 429s, the slowed calls still lost.
	if b.Attempts > b.Calls+b.Calls/100 || bp.Throttled != 0 || b.Failed < b.Calls/4 || bp.Abandoned > b.Failed+b.Failed/100 {
		t.Errorf("%s: %d attempts for %d calls, %d 429s, %d failed, %d abandoned; want one a call, none, a quarter and more failed, about one abandoned per failure",
			budget, b.Attempts, b.Calls, bp.Throttled, b.Failed, bp.Abandoned)
	}
	// Waiting the slowness out: every call through, nothing twice.
	if w.Failed != 0 || w.Attempts > w.Calls+w.Calls/1000 || wp.Abandoned > w.Calls/1000 || wp.Throttled != 0 {
		t.Errorf("%s: %d failed, %d attempts for %d calls, %d abandoned, %d 429s; want none failed, one attempt a call, nothing abandoned or throttled",
			patient, w.Failed, w.Attempts, w.Calls, wp.Abandoned, wp.Throttled)
	}
	// A provider that stops generating when the caller hangs up
	// (cancel_on_abandon): the copies left behind are cancelled, not
	// served, and the concurrency falls, but the calls fail all the same —
	// the timeout is still shorter than the answer.
	s := builtin(t, "slow-provider")
	s.Services[0].CancelOnAbandon = true
	s.Policies = s.Policies[:1]
	c := run(t, s, 1).Runs[0]
	cp := serviceOf(t, c, "provider")
	t.Logf("%-28s %5d calls, %5d failed, %5d attempts, %5d cancelled, %5d generated for nobody, %.0f requests in flight on average (cancel_on_abandon)",
		c.Policy, c.Calls, c.Failed, cp.Arrivals, cp.Failures["cancelled"], cp.Abandoned, cp.MeanBusy)
	if cp.Abandoned != 0 || cp.Failures["cancelled"] < np.Abandoned*9/10 || cp.MeanBusy > 0.6*np.MeanBusy || c.Failed < c.Calls/4 {
		t.Errorf("cancel_on_abandon: %d abandoned, %d cancelled, %.0f in flight, %d of %d calls failed; want none abandoned, about the %d abandoned without it cancelled, under 0.6× its %.0f in flight, still a quarter failed",
			cp.Abandoned, cp.Failures["cancelled"], cp.MeanBusy, c.Failed, c.Calls, np.Abandoned, np.MeanBusy)
	}
}

// TestRecoveryUnderLoad: a gateway that stays down while it is hammered
// ("in reality the harder you hammer the later it recovers")
// comes back at its planned time for polite callers and late for the
// hammering ones.
//
// The long version (RECOIL_LONG=1) runs the shipped 1,000 callers against
// a threshold of 2,000 attempts a second. By default a fifth of the callers
// meet a fifth of the threshold: every policy's load against it is the
// same ratio, and the hammering callers, who keep the gateway down until
// they have spent their 1,000 attempts each, make a fifth of the million
// attempts.
func TestRecoveryUnderLoad(t *testing.T) {
	t.Parallel()
	s := builtin(t, "gateway-outage")
	callers, below := "200", Rate(400) // per second: 80 per 200 ms window
	if long() {
		callers, below = "1000", 2000 // 400 per window
	}
	s.Services[0].Outages[0].RecoverBelow = below
	s.Sweep.Values = []string{callers}
	r := run(t, s, 1)
	rec := map[string]time.Duration{}
	for _, run := range r.Runs {
		o := run.Services[0].Outages[0]
		if !o.Recovered {
			t.Fatalf("%s: the gateway never recovered", run.Policy)
		}
		rec[run.Policy] = o.RecoveredAt
		t.Logf("%-22s recovered at %v, %d attempts", run.Policy, o.RecoveredAt, run.Attempts)
	}
	if rec["immediate 20ms"] < 5*time.Second || rec["exp+full jitter 60ms"] > 1500*time.Millisecond {
		t.Errorf("recovered at %v (immediate) and %v (jitter); want the hammered gateway down past 5s, the jittered one back within 1.5s", rec["immediate 20ms"], rec["exp+full jitter 60ms"])
	}
}

// TestBuiltinScenarios parses every shipped scenario.
func TestBuiltinScenarios(t *testing.T) {
	entries, err := scenarios.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, e := range entries {
		data, err := scenarios.FS.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(e.Name(), data); err != nil {
			t.Errorf("Parse(%s): %v", e.Name(), err)
		}
		n++
	}
	if n < 5 {
		t.Errorf("%d scenarios shipped, want at least 5", n)
	}
}

// TestTippingPointReading checks what the tipping-point scenario's text
// says its chart and table show: the failure rate at which retrying at
// once falls off the cliff is the analytic model's tipping point (recoil
// blast: 17.08 %, 17.5 % on its slider), with no gradual region; backoff
// falls off the same cliff, not at the analytic 37 %; the recoil default
// never falls off it.
//
// By default it runs 16 % and 19 % (a bracket of 3 points around the
// analytic 17.08 %) for 90 virtual seconds, the last 30 measured (at 19 %
// the queue reaches a second's wait in under a minute); RECOIL_LONG=1 runs
// the shipped sweep, 0 to 40 %, whose neighbouring values 17 % and 18 %
// bracket it within 1 point.
func TestTippingPointReading(t *testing.T) {
	t.Parallel()
	s := builtin(t, "tipping-point")
	tolerance := 0.01 // the width of the bracket around the cliff
	if !long() {
		s.Duration, s.Warmup = 90*time.Second, 60*time.Second
		s.Sweep = &Sweep{Path: s.Sweep.Path, Values: []string{"0.16", "0.19"}}
		tolerance = 0.03
	}
	analytic := blast.TippingPoint(1000, 1200, 2, false, 0)
	r := run(t, s, 1)
	span := (s.Duration - s.Warmup).Seconds()
	const once, backoff, def = "2 retries, at once", "2 retries, backoff", "recoil default"
	// The share of the calls that arrived that got through.
	through := func(run RunResult) float64 { return run.Goodput * span / float64(run.Calls) }
	// The highest failure rate at which a policy gets nearly every call
	// through, and the lowest at which it gets almost none; nothing may
	// lie between (no gradual region) or out of order.
	const fine, collapsed = 0.97, 0.03
	for _, p := range []string{once, backoff} {
		below, above := -1.0, 2.0
		for _, run := range r.Runs {
			if run.Policy != p {
				continue
			}
			f, _ := strconv.ParseFloat(run.SweepValue, 64)
			backend := serviceOf(t, run, "backend")
			share := through(run)
			t.Logf("failure %-4s %-18s %5.0f attempts/s, %5.1f%% of calls through, %5d attempts served for nobody",
				run.SweepValue, p, float64(run.Attempts)/span, 100*share, backend.Abandoned)
			switch {
			case share >= fine*(1-f*f*f):
				if f > below {
					below = f
				}
				if backend.Abandoned != 0 {
					t.Errorf("failure %s, %s: %d attempts abandoned below the tipping point, want 0", run.SweepValue, p, backend.Abandoned)
				}
			case share <= collapsed:
				above = min(above, f)
				// Past the cliff the backend is busy all the time, for
				// callers who have left.
				if backend.Abandoned < backend.Served*9/10 || float64(run.Attempts) < 2.9*float64(run.Calls) {
					t.Errorf("failure %s, %s: %d of %d served attempts abandoned, %.2f attempts a call; want nearly all abandoned, 3 a call",
						run.SweepValue, p, backend.Abandoned, backend.Served, float64(run.Attempts)/float64(run.Calls))
				}
			default:
				t.Errorf("failure %s, %s: %.1f%% of calls through: a gradual region, want nearly all or nearly none", run.SweepValue, p, 100*share)
			}
		}
		if !(below < analytic.Exact && analytic.Exact < above && above-below <= tolerance+1e-9) {
			t.Errorf("%s: the cliff lies between %v and %v; want a bracket of at most %v around the analytic tipping point %.4f", p, below, above, tolerance, analytic.Exact)
		}
		// Backoff's analytic tipping point is 37 %; in the steady state it
		// changes when retries land, not how many there are.
		if withBackoff := blast.TippingPoint(1000, 1200, 2, true, 0).Exact; p == backoff && above >= withBackoff {
			t.Errorf("backoff collapses from %v on, want well below the analytic %.4f", above, withBackoff)
		}
	}
	// The recoil default's budget (retries at most a fifth of the answers)
	// holds its load under 1.2 attempts a call, the backend's headroom,
	// whatever the failure rate: it gets at least the 1 − f of the calls
	// one attempt each would, and more below the tipping point, never falls
	// off the cliff, and past it gets more through than retrying.
	goodput := map[string]float64{}
	for _, run := range r.Runs {
		goodput[run.SweepValue+" "+run.Policy] = run.Goodput
	}
	for _, run := range r.Runs {
		if run.Policy != def {
			continue
		}
		f, _ := strconv.ParseFloat(run.SweepValue, 64)
		per := float64(run.Attempts) / float64(run.Calls)
		t.Logf("failure %-4s %-18s %.3f attempts a call, %5.1f%% of calls through", run.SweepValue, def, per, 100*through(run))
		if per > 1+0.2*through(run)+0.001 || through(run) < fine*(1-f) {
			t.Errorf("failure %s, recoil default: %.3f attempts a call, %.1f%% through; want at most %.3f and at least %.1f%%",
				run.SweepValue, per, 100*through(run), 1+0.2*through(run), 100*fine*(1-f))
		}
		if f > 0 && f <= 0.15 && through(run) < fine*(1-f*f*f) {
			t.Errorf("failure %s, recoil default: %.1f%% through; below the tipping point its retries should answer nearly every call", run.SweepValue, 100*through(run))
		}
		if f > analytic.Exact && run.Goodput <= goodput[run.SweepValue+" "+once] {
			t.Errorf("failure %s: the recoil default gets %.0f calls/s through, retrying at once %.0f; want more", run.SweepValue, run.Goodput, goodput[run.SweepValue+" "+once])
		}
	}
}
