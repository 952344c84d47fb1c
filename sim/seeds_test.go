package sim

import (
	"testing"
	"time"

	"github.com/recoil-go/recoil/scenarios"
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

// TestSeed000SharedPool runs seed 000's incident: a validator's 400 on one
// endpoint, retried by the five-attempt wrapper, pushes the healthy
// endpoints into queueing (a pool of 24: the retries drain it) and into 429s
// (a pool of 64, large enough that the retries reach the provider in full:
// 700 + 1,450 attempts/min against 2,000); the recoil default, which makes
// one attempt at a permanent error, does neither.
func TestSeed000SharedPool(t *testing.T) {
	r := run(t, builtin(t, "blast-radius"), 1)
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
			// Little's law on the seed's figures: 0.49 workers for the broken
			// endpoint plus 1,450/min × 0.4 s for the healthy ones.
			if want := 140.0/60*0.21 + 1450.0/60*0.4; app.MeanBusy < want*0.97 || app.MeanBusy > want*1.03 {
				t.Errorf("workers=%s recoil default: mean busy = %.2f, want %.2f ± 3%%", run.SweepValue, app.MeanBusy, want)
			}
		}
	}
}

// TestSeed004Shape runs seed 004 at 4 and at 1,000 callers: every caller gets
// through under every policy, and backing off lowers both the total attempts
// and the peak in a 200 ms window.
func TestSeed004Shape(t *testing.T) {
	r := run(t, builtin(t, "gateway-outage"), 1)
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

// TestTwoHourBlip runs seed 001's three layers through a 90-second failover:
// without the hop protocol the layers' retries keep the service overloaded
// long after the failover ended; with it, the amplification collapses to the
// edge's budget and the system recovers.
func TestTwoHourBlip(t *testing.T) {
	s := builtin(t, "two-hour-blip")
	s.Duration = 4 * time.Minute // the collapse is well under way by then
	r := run(t, s, 1)
	plain, hop := r.Runs[0], r.Runs[1]
	for _, run := range r.Runs {
		t.Logf("%-18s attempts at the service per call %.2f, goodput %.0f/s, failed %d of %d",
			run.Policy, float64(run.Attempts)/float64(run.Calls), run.Goodput, run.Failed, run.Calls)
	}
	if plain.Goodput > 500 || float64(plain.Attempts) < 3*float64(plain.Calls) {
		t.Errorf("without hop: goodput %.0f/s, %d attempts for %d calls; want a sustained collapse", plain.Goodput, plain.Attempts, plain.Calls)
	}
	if hop.Goodput < 990 || float64(hop.Attempts) > 1.05*float64(hop.Calls) {
		t.Errorf("with hop: goodput %.0f/s, %d attempts for %d calls; want recovery", hop.Goodput, hop.Attempts, hop.Calls)
	}
}

// TestRecoveryUnderLoad: a gateway that stays down while it is hammered
// (seed 004: "in reality the harder you hammer the later it recovers")
// comes back at its planned time for polite callers and late for the
// hammering ones.
func TestRecoveryUnderLoad(t *testing.T) {
	s := builtin(t, "gateway-outage")
	s.Services[0].Outages[0].RecoverBelow = 2000 // per second: 400 per 200 ms window
	s.Sweep.Values = []string{"1000"}
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
