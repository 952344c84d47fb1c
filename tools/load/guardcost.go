package load

import (
	"math"

	"github.com/recoil-go/recoil"
)

// recentWeight is the weight of one attempt in the running success rate a
// guard's refusal is priced at: about the last 50 attempts count.
const recentWeight = 1.0 / 50

// recent is the success rate of the attempts sent lately, as an
// exponentially weighted mean: what the dependency would likely have
// answered an attempt a guard refused. The zero value has seen nothing.
type recent struct {
	n    int64   // attempts seen, up to 1/recentWeight
	rate float64 // the mean of their successes
}

// add counts one attempt's outcome. The first attempts are averaged
// evenly, so that the first few do not swing the rate.
func (s *recent) add(ok bool) {
	x := 0.0
	if ok {
		x = 1
	}
	w := recentWeight
	if s.n < int64(1/recentWeight) {
		s.n++
		w = 1 / float64(s.n)
	}
	s.rate += w * (x - s.rate)
}

// priceGuard counts, for a logical request stopped by reason, the answer
// it would likely have had if reason is a guard's refusal (an open breaker,
// a spent retry budget). r.mu must be held.
func (r *run) priceGuard(reason recoil.Reason) {
	if reason != recoil.ReasonCircuitOpen && reason != recoil.ReasonBudget {
		return
	}
	r.likely[reason.String()] += r.recent.rate
}

// likelyWon returns the priced refusals, rounded, or nil for none.
func (r *run) likelyWon() map[string]float64 {
	if len(r.likely) == 0 {
		return nil
	}
	out := make(map[string]float64, len(r.likely))
	for k, v := range r.likely {
		out[k] = math.Round(v)
	}
	return out
}
