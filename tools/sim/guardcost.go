package sim

import (
	"math"

	"github.com/recoil-go/recoil"
)

// guardSample is the least number of attempts the success rate a guard's
// refusal is priced at is read over: the node's last finished samples, as
// many as it takes (at most guardLookback), so a breaker that has sent
// nothing for a while is priced at the rate that opened it. The sample in
// progress is left out: its attempts still in service have no outcome yet.
const (
	guardSample   = 20
	guardLookback = 50
)

// isGuard reports whether reason is a guard's refusal of an attempt the
// dependency might have answered: an open breaker or a spent retry budget.
func isGuard(reason recoil.Reason) bool {
	return reason == recoil.ReasonCircuitOpen || reason == recoil.ReasonBudget
}

// successRate returns the share of the attempts that reached node i lately
// that it answered with success: its last finished samples, until
// guardSample attempts or guardLookback samples. It is 0 with no attempts
// to read.
func (w *world) successRate(i int32) float64 {
	m := &w.nodes[i].m
	var arr, ok int64
	for k := len(m.series) - 1; k >= 0 && arr < guardSample && len(m.series)-k <= guardLookback; k-- {
		arr += m.series[k].Arrivals
		ok += m.series[k].Succeeded
	}
	if arr == 0 {
		return 0
	}
	return math.Min(float64(ok)/float64(arr), 1)
}

// priceGuard counts what a call stopped by reason cost cl, if a guard
// stopped it: the answer its refused attempt would likely have won, at the
// target's success rate now.
func (w *world) priceGuard(cl *client, reason recoil.Reason) {
	if !isGuard(reason) {
		return
	}
	if reason == recoil.ReasonCircuitOpen {
		cl.wonBreaker += w.successRate(cl.target)
	} else {
		cl.wonBudget += w.successRate(cl.target)
	}
}
