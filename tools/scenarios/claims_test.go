package scenarios_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/scenarios"
	"github.com/recoil-go/recoil/tools/sim"
)

// A claim is a figure a scenario's comments state about its own run: the
// words as the file writes them, and how to read the figure off the run.
// TestScenarioClaims runs the scenario and checks that the words hold the
// figure the run prints, so a change to the simulator or the file that
// moves a figure fails here instead of leaving the comment wrong.
type claim struct {
	long  bool // a run of seconds: checked under RECOIL_LONG=1 (CI)
	file  string
	words string                                     // in the comments, as written (line breaks as spaces)
	seed  uint64                                     // 0: the scenario's own
	got   func(t *testing.T, r *sim.Result) []string // the figures, as the words write them
}

var claims = []claim{
	{false, "gateway-outage", "send the gateway 94 attempts, 28 of them in the busiest window", 0, func(t *testing.T, r *sim.Result) []string {
		run := runOf(t, r, "4", "immediate 20ms")
		return []string{num(run.Attempts), num(run.Peak)}
	}},
	{false, "gateway-outage", "and full jitter, 26, 14 in the busiest window", 0, func(t *testing.T, r *sim.Result) []string {
		run := runOf(t, r, "4", "exp+full jitter 60ms")
		return []string{num(run.Attempts), num(run.Peak)}
	}},
	{false, "gateway-outage", "for 3.6 times fewer attempts", 0, func(t *testing.T, r *sim.Result) []string {
		a, b := runOf(t, r, "4", "immediate 20ms"), runOf(t, r, "4", "exp+full jitter 60ms")
		return []string{fmt.Sprintf("%.1f", float64(a.Attempts)/float64(b.Attempts))}
	}},
	{false, "one-at-a-time", "the gateway sees one attempt per 12 ms — 62 in all, 17 in the busiest window", 0, func(t *testing.T, r *sim.Result) []string {
		run := runOf(t, r, "", "immediate 20ms")
		return []string{num(run.Attempts), num(run.Peak)}
	}},
	{false, "one-at-a-time", "24 attempts, 11 in the busiest window", 0, func(t *testing.T, r *sim.Result) []string {
		run := runOf(t, r, "", "exp+full jitter 60ms")
		return []string{num(run.Attempts), num(run.Peak)}
	}},
	{false, "one-at-a-time", "(over seeds 1 to 11, 23 to 28 attempts and 11 to 15 in the busiest window)", 0, func(t *testing.T, _ *sim.Result) []string {
		lo, hi, plo, phi := int64(math.MaxInt64), int64(0), int64(math.MaxInt64), int64(0)
		for seed := uint64(1); seed <= 11; seed++ {
			run := runOf(t, result(t, "one-at-a-time", seed), "", "exp+full jitter 60ms")
			lo, hi, plo, phi = min(lo, run.Attempts), max(hi, run.Attempts), min(plo, run.Peak), max(phi, run.Peak)
		}
		return []string{fmt.Sprintf("%d to %d attempts", lo, hi), fmt.Sprintf("%d to %d in the busiest", plo, phi)}
	}},
	{false, "fallback-chain", "every call fails for those ten minutes — 6,000 of them", 0, func(t *testing.T, r *sim.Result) []string {
		return []string{num(runOf(t, r, "", "no fallback").Failed)}
	}},
	{false, "fallback-chain", "No call makes more than two attempts, and the calls make 1.00 a call on average", 0, func(t *testing.T, r *sim.Result) []string {
		c := runOf(t, r, "", "recoil chain, 3 attempts in all").Clients[0]
		return []string{words[c.MostAttempts], fmt.Sprintf("%.2f", float64(c.Attempts)/float64(c.Calls))}
	}},
	{false, "fallback-chain", "up to five for one call", 0, func(t *testing.T, r *sim.Result) []string {
		return []string{words[runOf(t, r, "", "3 attempts per target (gateway)").Clients[0].MostAttempts]}
	}},
	{false, "fleet-budget", "nothing changes as the fleet grows: 1.17 attempts a call", 0, func(t *testing.T, r *sim.Result) []string {
		var out []string
		for _, n := range []string{"1", "5", "40"} {
			out = append(out, perCall(runOf(t, r, n, "one budget for the fleet")))
		}
		return out
	}},
	{false, "fleet-budget", "(1.37 attempts a call at 5 replicas, 1.63 at 40)", 0, func(t *testing.T, r *sim.Result) []string {
		return []string{perCall(runOf(t, r, "5", "budget per replica")), perCall(runOf(t, r, "40", "budget per replica"))}
	}},
	{false, "fleet-budget", "holds 530 attempts at 40 replicas, against 39 with one budget", 0, func(t *testing.T, r *sim.Result) []string {
		return []string{num(runOf(t, r, "40", "budget per replica").Peak), num(runOf(t, r, "40", "one budget for the fleet").Peak)}
	}},
	{false, "slow-provider", "down: a third of the calls fail, and 5,000 requests are paid for that nobody received", 0, func(t *testing.T, r *sim.Result) []string {
		return []string{num(serviceOf(t, runOf(t, r, "", "10s timeout, 3 attempts"), "provider").Abandoned)}
	}},
	{false, "slow-provider", "and 1,200 answers are generated for nobody", 0, func(t *testing.T, r *sim.Result) []string {
		return []string{num(serviceOf(t, runOf(t, r, "", "10s timeout, 3 attempts, cap 40"), "provider").Abandoned)}
	}},
	{true, "slow-tail-hedge", "the 3 % in the tail make the p99 1.7 s", 0, func(t *testing.T, r *sim.Result) []string {
		return []string{fmt.Sprintf("%.1f s", runOf(t, r, "50", "no hedge").Latency.P99.Seconds())}
	}},
	{true, "slow-tail-hedge", "the p99 falls to about 100 ms, a sixteenth, for 8 % more attempts", 0, func(t *testing.T, r *sim.Result) []string {
		no, h := runOf(t, r, "50", "no hedge"), runOf(t, r, "50", "hedge at p95")
		return []string{
			fmt.Sprintf("about %d ms", int(math.Round(h.Latency.P99.Seconds()*10))*100),
			"a " + ordinal[int(math.Round(no.Latency.P99.Seconds()/h.Latency.P99.Seconds()))],
			fmt.Sprintf("%.0f %% more attempts", 100*(float64(h.Attempts)/float64(no.Attempts)-1)),
		}
	}},
	{true, "tipping-point", "(99 % at 16 %: only calls failing three times in a row fail); from 18 % on they get none through", 0, func(t *testing.T, r *sim.Result) []string {
		var out []string
		for _, p := range []string{"2 retries, at once", "2 retries, backoff"} {
			at16 := runOf(t, r, "0.16", p)
			out = append(out, fmt.Sprintf("%.0f %% at 16 %%", 100*float64(at16.Succeeded)/float64(at16.Calls)))
			for _, f := range []string{"0.18", "0.20", "0.30", "0.40"} {
				if ok := runOf(t, r, f, p).Succeeded; ok != 0 {
					out = append(out, fmt.Sprintf("%s at %s: %d through", p, f, ok))
				}
			}
		}
		return out
	}},
}

// The do-no-harm and tipping-point figures of recoil's default budget.
func init() {
	claims = append(claims,
		claim{true, "do-no-harm", "(81 % at 30 %, 56 % at 50 %) for at most 1.2 attempts a call", 0, func(t *testing.T, r *sim.Result) []string {
			return []string{share(runOf(t, r, "0.30", "Default()")) + " at 30", share(runOf(t, r, "0.50", "Default()")) + " at 50"}
		}},
		claim{true, "do-no-harm", "(1.02 at 90 %, 1.00 when it is down)", 0, func(t *testing.T, r *sim.Result) []string {
			return []string{perCall(runOf(t, r, "0.90", "Default()")) + " at 90", perCall(runOf(t, r, "1", "Default()")) + " when"}
		}},
		claim{true, "tipping-point", "as retrying does (99 % at 16 %)", 0, func(t *testing.T, r *sim.Result) []string {
			return []string{share(runOf(t, r, "0.16", "recoil default"))}
		}},
		claim{true, "tipping-point", "(81 % at 30 %, against the 70 % one attempt each would answer)", 0, func(t *testing.T, r *sim.Result) []string {
			return []string{share(runOf(t, r, "0.30", "recoil default"))}
		}},
	)
}

// The figures of sdk-behind-gateway, blast-radius and two-hour-blip. The
// comparisons occ-contention's comments make are pinned over many seeds by
// the simulator's TestBrookerStudy, as its comments say.
func init() {
	claims = append(claims,
		claim{false, "sdk-behind-gateway", "1 + f + f² = 2.44 on average at f = 0.8", 0, func(*testing.T, *sim.Result) []string {
			return []string{fmt.Sprintf("= %.2f", 1+0.8+0.8*0.8)}
		}},
		claim{false, "sdk-behind-gateway", "(f³ = 0.51), up to 3 times: 1 + f³ + f⁶ = 1.77 gateway calls per call, 4.33 attempts", 0, func(*testing.T, *sim.Result) []string {
			f3 := math.Pow(0.8, 3)
			return []string{fmt.Sprintf("= %.2f)", f3), fmt.Sprintf("= %.2f gateway", 1+f3+f3*f3), fmt.Sprintf("%.2f attempts", (1+f3+f3*f3)*(1+0.8+0.8*0.8))}
		}},
		claim{false, "sdk-behind-gateway", "1 − f⁹ = 87 % of the calls. The run at the default seed: 4.20 attempts a call, 87 % answered", 0, func(t *testing.T, r *sim.Result) []string {
			run := runOf(t, r, "", "SDK 3 × gateway 3")
			return []string{fmt.Sprintf("= %.0f %%", 100*(1-math.Pow(0.8, 9))), perCall(run) + " attempts", share(run) + " answered"}
		}},
		claim{false, "sdk-behind-gateway", "and 1 − f³ = 49 % answered (the run: 2.41 a call, 50 % answered)", 0, func(t *testing.T, r *sim.Result) []string {
			run := runOf(t, r, "", "recoil proxy, one layer")
			return []string{fmt.Sprintf("= %.0f %%", 100*(1-math.Pow(0.8, 3))), perCall(run) + " a call", share(run) + " answered"}
		}},
		claim{false, "sdk-behind-gateway", "sending the provider 1.7 times the attempts", 0, func(t *testing.T, r *sim.Result) []string {
			a, b := runOf(t, r, "", "SDK 3 × gateway 3"), runOf(t, r, "", "recoil proxy, one layer")
			return []string{fmt.Sprintf("%.1f times", float64(a.Attempts)/float64(b.Attempts))}
		}},
		claim{false, "blast-radius", "with 24 workers the allowance holds (no 429s in the run) and the damage is all queueing: the app's queue reaches 22,860 requests, healthy calls time out and re-send, and no call is answered", 0, func(t *testing.T, r *sim.Result) []string {
			run := runOf(t, r, "24", "5-attempt wrapper")
			return []string{no(serviceOf(t, run, "provider").Throttled) + " 429s", num(int64(serviceOf(t, run, "app").MaxQueue)), no(run.Succeeded) + " call is answered"}
		}},
		claim{false, "blast-radius", "the healthy endpoints take 3,275 of its 4,306 429s, and the queue still grows, more slowly (to 14,554)", 0, func(t *testing.T, r *sim.Result) []string {
			run := runOf(t, r, "64", "5-attempt wrapper")
			p := serviceOf(t, run, "provider")
			return []string{num(p.ThrottledBy["healthy"]) + " of", num(p.Throttled) + " 429s", num(int64(serviceOf(t, run, "app").MaxQueue)) + ")"}
		}},
		claim{false, "blast-radius", "makes one attempt (1.00 a call): no 429s and a queue of at most 2, at either size", 0, func(t *testing.T, r *sim.Result) []string {
			var out []string
			for _, n := range []string{"24", "64"} {
				run := runOf(t, r, n, "recoil default")
				q := serviceOf(t, run, "app").MaxQueue
				if q > 2 {
					out = append(out, fmt.Sprintf("a queue of %d at %s", q, n))
				}
				out = append(out, "("+perCall(run)+" a call)", no(serviceOf(t, run, "provider").Throttled)+" 429s")
			}
			return out
		}},
		claim{true, "two-hour-blip", "climb to nine times the cell's 40 taps a window and stay there", 0, func(t *testing.T, r *sim.Result) []string {
			s := serviceOf(t, runOf(t, r, "", "3 per layer"), "service")
			return []string{words[int64(math.Round(meanArrivals(s, 150*time.Second, 330*time.Second)/40))] + " times"}
		}},
		claim{true, "two-hour-blip", "(from its end to the last half minute of the run, 20 % of all taps fail)", 0, func(t *testing.T, r *sim.Result) []string {
			run := runOf(t, r, "", "3 per layer")
			got := delivered(serviceOf(t, run, "gateway"), 150*time.Second, 330*time.Second) +
				delivered(serviceOf(t, run, "other gateways"), 150*time.Second, 330*time.Second)
			return []string{fmt.Sprintf("%.0f %% of all", 100*(1-float64(got)/(1000*180)))}
		}},
		claim{true, "two-hour-blip", "the cell loses 36 of its 66,012 taps while the failover lasts and none after it", 0, func(t *testing.T, r *sim.Result) []string {
			run := runOf(t, r, "", "3 per layer + hop")
			c := run.Clients[0]
			out := []string{num(c.Failed) + " of", num(c.Calls) + " taps"}
			if d := delivered(serviceOf(t, run, "gateway"), 150*time.Second, 330*time.Second); d < 200*180*99/100 {
				out = append(out, fmt.Sprintf("%d answered after the failover of %d", d, 200*180))
			}
			return out
		}},
	)
}

// share writes the share of a run's calls answered, as the comments do.
func share(r *sim.RunResult) string {
	return fmt.Sprintf("%.0f %%", 100*float64(r.Succeeded)/float64(r.Calls))
}

// no writes 0 as "no" and any other count as a number.
func no(n int64) string {
	if n == 0 {
		return "no"
	}
	return num(n)
}

// meanArrivals is a service's mean arrivals per window from from to to.
func meanArrivals(s *sim.ServiceResult, from, to time.Duration) float64 {
	var sum, n int64
	for _, p := range s.Series {
		if p.T > from && p.T <= to {
			sum, n = sum+p.Arrivals, n+1
		}
	}
	return float64(sum) / float64(max(n, 1))
}

// delivered counts the calls answered through a service from from to to.
func delivered(s *sim.ServiceResult, from, to time.Duration) int64 {
	var sum int64
	for _, p := range s.Series {
		if p.T > from && p.T <= to {
			sum += p.Delivered
		}
	}
	return sum
}

// TestScenarioClaims checks every claim against a run of its scenario.
func TestScenarioClaims(t *testing.T) {
	for _, c := range claims {
		t.Run(c.file, func(t *testing.T) {
			if c.long && (os.Getenv("RECOIL_LONG") != "1" || testing.Short()) {
				t.Skip("a run of seconds: set RECOIL_LONG=1")
			}
			comments := commentText(t, c.file)
			if !strings.Contains(comments, c.words) {
				t.Fatalf("%s.yaml's comments lack %q", c.file, c.words)
			}
			for _, fig := range c.got(t, result(t, c.file, c.seed)) {
				if !strings.Contains(c.words, fig) {
					t.Errorf("%s.yaml says %q; the run gives %s", c.file, c.words, fig)
				}
			}
		})
	}
}

// commentText returns a scenario file's comments as one line of words.
func commentText(t *testing.T, name string) string {
	data, err := scenarios.FS.ReadFile(name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for line := range strings.Lines(string(data)) {
		if _, c, ok := strings.Cut(line, "#"); ok {
			b.WriteString(c + " ")
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

var (
	resultsMu sync.Mutex
	results   = map[string]*sim.Result{}
)

// result runs a built-in scenario once per seed and keeps the result.
func result(t *testing.T, name string, seed uint64) *sim.Result {
	t.Helper()
	key := fmt.Sprint(name, seed)
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if r, ok := results[key]; ok {
		return r
	}
	data, err := scenarios.FS.ReadFile(name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Parse(name+".yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(t.Context(), s, sim.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	results[key] = r
	return r
}

func runOf(t *testing.T, r *sim.Result, sweep, policy string) *sim.RunResult {
	t.Helper()
	for i := range r.Runs {
		if r.Runs[i].SweepValue == sweep && r.Runs[i].Policy == policy {
			return &r.Runs[i]
		}
	}
	t.Fatalf("%s: no run of policy %q at %q", r.Scenario, policy, sweep)
	return nil
}

func serviceOf(t *testing.T, run *sim.RunResult, name string) *sim.ServiceResult {
	t.Helper()
	for i := range run.Services {
		if run.Services[i].Name == name {
			return &run.Services[i]
		}
	}
	t.Fatalf("run %s: no service %q", run.Policy, name)
	return nil
}

func perCall(run *sim.RunResult) string {
	return fmt.Sprintf("%.2f", float64(run.Attempts)/float64(run.Calls))
}

// num writes n as the comments do: 1,000 and up with a comma.
func num(n int64) string {
	s := fmt.Sprint(n)
	if n >= 1000 {
		s = s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}

var ordinal = map[int]string{2: "half", 3: "third", 4: "quarter", 16: "sixteenth"}

var words = map[int64]string{1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}
