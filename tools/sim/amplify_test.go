package sim_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/sim"
	"github.com/recoil-go/recoil/tools/sim/blast"
)

// TestAmplificationMatchesBlast: below capacity, the simulated load — every
// failed attempt retried at once, up to two retries — is within 2 % of the
// calculator's (package blast, the amplification model): offered·(1 + f + f²),
// 1,240/s at 1,000/s and f = 0.2.
func TestAmplificationMatchesBlast(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0.05, 0.2, 0.4} {
		t.Run(fmt.Sprintf("failure %g", f), func(t *testing.T) {
			s := &sim.Scenario{
				Name:     "amplification",
				Duration: 60 * time.Second,
				Policies: []sim.PolicySpec{{Name: "2 retries, at once", MaxAttempts: 3,
					Backoff: &policyspec.Backoff{Kind: policyspec.BackoffNone}, Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}}},
				// Capacity to spare: nothing is shed, only the fault fails.
				Services: []sim.ServiceSpec{{Name: "backend", Service: sim.Constant(100 * time.Millisecond), Failure: f}},
				Clients:  []sim.ClientSpec{{Name: "requests", Target: "backend", Rate: 1000}},
			}
			res, err := sim.Run(t.Context(), s, sim.Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Runs[0]
			got := float64(r.Attempts) / float64(r.Calls)
			want := blast.Load(1000, 1e9, f, 2, false) / 1000
			if math.Abs(got-want)/want > 0.02 {
				t.Errorf("simulated amplification = %.4f, blast.Load = %.4f: off by more than 2%%", got, want)
			} else {
				t.Logf("simulated amplification = %.4f, blast.Load = %.4f (off by %.2f%%)", got, want, 100*math.Abs(got-want)/want)
			}
		})
	}
}
