package load

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
)

// The policies of the do-no-harm sweep on the gateway: no retries, each of
// recoil's defaults (with the budget share it states), and a hand-written
// loop for contrast.
var doNoHarmPolicies = []struct {
	name, preset string
	spec         string // a policy file's text, when not a preset
	share        float64
	reserve      float64
}{
	{name: "no retries", spec: "name: no retries\nmax_attempts: 1\n"},
	{name: "Default()", spec: "name: Default()\n", share: 0.2, reserve: 10},
	{name: "Interactive()", preset: PresetInteractive, share: 0.2, reserve: 10},
	{name: "Background()", preset: PresetBackground, share: 0.1, reserve: 20},
	{name: "default preset", preset: PresetDefault, share: 0.2, reserve: 10},
	{name: "full-jitter", preset: PresetFullJitter},
}

func doNoHarmPolicy(t *testing.T, i int) Policy {
	t.Helper()
	p := doNoHarmPolicies[i]
	if p.preset != "" {
		return preset(t, p.preset)
	}
	pol, err := ParsePolicy("policy.yaml", []byte(p.spec))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// sweepRun is one policy's run at one failure rate.
type sweepRun struct {
	policy int
	fail   float64
	res    *Result
}

// TestDoNoHarmOnTheGateway is the contract of recoil's defaults (docs/why.md,
// "Do no harm") on the real load driver and gateway: a gateway that fails
// attempts at random with a 503, 100 calls a second. At each failure rate
// up to 50 %, each default answers at least as many calls as no retries,
// and sends at most what its budget states. The default run is on virtual
// time (a synctest bubble, in-memory connections); RECOIL_LONG=1 runs the
// whole sweep on real loopback sockets, docs/gateway.md's table.
func TestDoNoHarmOnTheGateway(t *testing.T) {
	if os.Getenv("RECOIL_LONG") == "1" && !testing.Short() {
		doNoHarmOnLoopback(t)
		return
	}
	for _, fail := range []float64{0.3, 0.5} {
		t.Run(fmt.Sprintf("%g%%", 100*fail), func(t *testing.T) {
			runs := make([]sweepRun, 5) // no retries and the four defaults
			for i := range runs {
				synctest.Test(t, func(t *testing.T) {
					_, base, tr := serveInBubble(t, gateway.Config{FailureRate: fail, FailureStatus: http.StatusServiceUnavailable, Seed: 1})
					r, err := Run(context.Background(), Config{
						URL: base + "/v1/messages", Body: []byte(`{"model":"m"}`), Rate: 100,
						Duration: 10 * time.Second, MaxRequests: MaxLogicalRequests, Policy: doNoHarmPolicy(t, i), Base: tr, Seed: 1,
					})
					if err != nil {
						t.Fatal(err)
					}
					runs[i] = sweepRun{i, fail, r}
				})
			}
			checkDoNoHarm(t, runs)
		})
	}
}

// checkDoNoHarm asserts the contract on runs at one failure rate, the first
// of them without retries.
func checkDoNoHarm(t *testing.T, runs []sweepRun) {
	t.Helper()
	none := runs[0].res
	for _, sr := range runs[1:] {
		p, r := doNoHarmPolicies[sr.policy], sr.res
		if p.share == 0 {
			continue
		}
		answered := answeredOf(r)
		if bound := 1 + p.share*answered + p.reserve/float64(r.Calls) + 0.01; r.PerCall() > bound {
			t.Errorf("failure %g, %s: %.3f attempts a call, above its budget's %.3f", sr.fail, p.name, r.PerCall(), bound)
		}
		// What the budget's refusals cost: the answers their retries would
		// likely have had, at about the success rate.
		if refused := r.Stops["retry budget exhausted"]; refused > 50 {
			won, want := r.LikelyWon["retry budget exhausted"], float64(refused)*(1-sr.fail)
			if math.Abs(won-want) > 0.25*want {
				t.Errorf("failure %g, %s: %d calls the budget turned away priced at %.0f answers, want about %.0f", sr.fail, p.name, refused, won, want)
			}
		}
		if sr.fail > 0.5 {
			continue
		}
		// Both runs draw their own failures: compare shares, within the
		// sampling noise of each.
		noise := 3 * math.Sqrt(sr.fail*(1-sr.fail)*(1/float64(r.Calls)+1/float64(none.Calls)))
		if answered < answeredOf(none)-noise {
			t.Errorf("failure %g, %s: answered %.1f %% of finished calls, no retries %.1f %% (stops %v, no response %v)", sr.fail, p.name, 100*answered, 100*answeredOf(none), r.Stops, r.TransportErrors)
		}
	}
}

// answeredOf is the share of the finished calls that were answered: the
// calls the run's end cut off are left out, so a machine too busy to keep
// the rate does not read as failures.
func answeredOf(r *Result) float64 {
	if r.OK+r.Failed == 0 {
		return 0
	}
	return float64(r.OK) / float64(r.OK+r.Failed)
}

// doNoHarmOnLoopback runs the sweep on real sockets, two runs at a time,
// each against a gateway of its own, and logs docs/gateway.md's table.
func doNoHarmOnLoopback(t *testing.T) {
	rates := []float64{0, 0.05, 0.10, 0.20, 0.30, 0.50, 0.70, 0.90, 1}
	var mu sync.Mutex
	runs := map[float64][]sweepRun{}
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, fail := range rates {
		runs[fail] = make([]sweepRun, len(doNoHarmPolicies))
		for i := range doNoHarmPolicies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				var r *Result
				for try := 1; try <= loopbackTries; try++ {
					var err error
					if r, err = loopbackRun(t, fail, i); err != nil {
						t.Error(err)
						return
					}
					why := disturbed(r, fail)
					if why == "" {
						break
					}
					t.Logf("failure %g, %s, try %d of %d: %s (stops %v)", fail, doNoHarmPolicies[i].name, try, loopbackTries, why, r.Stops)
				}
				mu.Lock()
				runs[fail][i] = sweepRun{i, fail, r}
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var b strings.Builder
	b.WriteString("| policy |")
	for _, f := range rates {
		fmt.Fprintf(&b, " %g %% |", 100*f)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(rates)) + "\n")
	for i, p := range doNoHarmPolicies {
		fmt.Fprintf(&b, "| %s |", p.name)
		for _, f := range rates {
			r := runs[f][i].res
			fmt.Fprintf(&b, " %.1f %% · %.2f |", 100*answeredOf(r), r.PerCall())
		}
		b.WriteString("\n")
	}
	t.Logf("answered of finished calls · attempts per call, on loopback:\n%s", b.String())
	for _, f := range rates {
		checkDoNoHarm(t, runs[f])
	}
}

// loopbackTries is how many times a loopback run is made when the machine
// disturbed it (see disturbed). The gateway's failures and the driver's
// draws are seeded, so a policy that breaks the contract breaks it on every
// try; a machine that stalls for a moment rarely does so three times over.
const loopbackTries = 3

// loopbackRun is one policy's run at one failure rate, against a gateway
// of its own on a real loopback socket.
func loopbackRun(t *testing.T, fail float64, i int) (*Result, error) {
	g, err := gateway.New(gateway.Config{FailureRate: fail, FailureStatus: http.StatusServiceUnavailable, Seed: 1})
	if err != nil {
		return nil, err
	}
	url, stop, err := g.Start()
	if err != nil {
		return nil, err
	}
	defer stop()
	return Run(context.Background(), Config{
		URL: url + "/v1/messages", Body: []byte(`{"model":"m"}`), Rate: 100,
		Duration: 8 * time.Second, MaxRequests: MaxLogicalRequests, Policy: doNoHarmPolicy(t, i), Seed: 1,
	})
}

// disturbed says how the machine, rather than the gateway, shaped a run:
// attempts that got no response (the gateway only ever answers, with a
// 200 or its 503), or a breaker that opened at a failure rate its default
// trips leave alone (up to 50 %, where about one window in 2,000 trips by
// chance). "" for a run the gateway alone shaped. A run still disturbed
// after loopbackTries is judged like any other, and a failure names what
// it met.
func disturbed(r *Result, fail float64) string {
	var lost int64
	for _, n := range r.TransportErrors {
		lost += n
	}
	switch {
	case lost > 0:
		return fmt.Sprintf("%d attempts got no response (%v; first: %s)", lost, r.TransportErrors, r.FirstTransportError)
	case fail <= 0.5 && r.Stops["circuit open"] > 0:
		return fmt.Sprintf("the breaker refused %d calls at a %g %% failure rate", r.Stops["circuit open"], 100*fail)
	}
	return ""
}

// TestDisturbed: what makes a loopback run again, and what does not.
func TestDisturbed(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    Result
		fail float64
		want string // a word the reason holds; "" for none
	}{
		{"the gateway's own", Result{Stops: map[string]int{"attempts exhausted": 3}}, 0.5, ""},
		{"attempts lost", Result{TransportErrors: map[string]int64{"timeout": 2}, FirstTransportError: "i/o timeout"}, 0.3, "no response"},
		{"breaker at 50 %", Result{Stops: map[string]int{"circuit open": 40}}, 0.5, "breaker"},
		{"breaker at 70 %", Result{Stops: map[string]int{"circuit open": 40}}, 0.7, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := disturbed(&tt.r, tt.fail)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("disturbed = %q, want one that says %q", got, tt.want)
			}
		})
	}
}
