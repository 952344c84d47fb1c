package sim

import (
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/conformance"
)

// Every row of the conformance table through the simulator's world, on
// virtual time: one caller makes one call against a dependency that answers
// each attempt as the row's script says. The same attempts, stop reason,
// error identity and waits as recoil.Do and the HTTP Transport. A row whose
// policy has a Fallback has one service per target, each answering as the
// script says, and its attempts go where the Call sends them; a row with a
// Hedge races its slow attempts on the same virtual time.
func TestConformanceSim(t *testing.T) {
	conformance.Run(t, conformance.Sim, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		sc := &Scenario{
			Name:     "conformance",
			Duration: time.Hour,
			Services: []ServiceSpec{{Name: "dependency"}},
			Clients:  []ClientSpec{{Name: "caller", Target: "dependency", Callers: 1, Calls: 1}},
		}
		if p.Fallback != nil {
			for _, tg := range p.Fallback.Targets {
				sc.Services = append(sc.Services, ServiceSpec{Name: tg.Name})
			}
		}
		ps := &PolicySpec{Name: "row"}
		if row.RequestBudget != nil {
			ps.Hop = *row.RequestBudget
		}
		w := newWorld(sc, ps, 1, DefaultWindow)
		for i := range w.nodes {
			w.nodes[i].script = func(n int) (uint8, int64, int64) { return scripted(t, row.Reached(n, p)) }
		}
		// The row's policy, state and all, driven as the simulator drives
		// a compiled one: each target reaches the service of its name.
		var mode uint8
		if p.Fallback != nil {
			mode |= modeRouted
			for i := range p.Fallback.Targets {
				p.Fallback.Targets[i].Value = upstream(i + 1)
			}
		}
		if p.Hedge != nil {
			mode |= modeHedged
		}
		for i := range w.calls.n {
			c := w.calls.get(i)
			pol := *c.pol
			pol.mode = mode
			c.rp, c.pol = p, &pol
		}
		w.run()
		if got := w.clients[0].attempts; got != int64(row.Attempts) {
			t.Errorf("the client counted %d attempts, want %d", got, row.Attempts)
		}
		if p.Hedge != nil {
			if got := w.clients[0].hedges; got != int64(row.Hedges) {
				t.Errorf("the client counted %d hedges, want %d", got, row.Hedges)
			}
		}
	})
}

// scripted is what a simulated dependency answers for the row's outcome o:
// the result, a server wait and how long the answer takes.
func scripted(t *testing.T, o conformance.Outcome) (uint8, int64, int64) {
	after := int64(o.After)
	switch o.Kind {
	case conformance.OK:
		return resOK, 0, after
	case conformance.Hang:
		return resDropped, 0, 0
	}
	switch {
	case o.Status == 404:
		return resNotFound, 0, after
	case o.Status == 401:
		return resUnauthorized, 0, after
	case o.Status == 429 && o.Code == "insufficient_quota":
		return resQuota, 0, after
	case o.Status == 400 && o.Code == "":
		return resPermanent, 0, after
	case o.Status == 429 && o.Code == "":
		return resThrottled, int64(o.RetryAfter), after
	case o.Status == 503:
		return resFull, 0, after
	case o.Status == 500:
		return resFail, 0, after
	}
	t.Fatalf("no simulated result for status %d (code %q)", o.Status, o.Code)
	return 0, 0, 0
}
