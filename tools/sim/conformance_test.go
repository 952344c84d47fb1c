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
// error identity and waits as recoil.Do and the HTTP Transport.
func TestConformanceSim(t *testing.T) {
	conformance.Run(t, conformance.Sim, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		sc := &Scenario{
			Name:     "conformance",
			Duration: time.Hour,
			Services: []ServiceSpec{{Name: "dependency"}},
			Clients:  []ClientSpec{{Name: "caller", Target: "dependency", Callers: 1, Calls: 1}},
		}
		ps := &PolicySpec{Name: "row"}
		if row.RequestBudget != nil {
			ps.Hop = *row.RequestBudget
		}
		w := newWorld(sc, ps, 1, DefaultWindow)
		w.nodes[0].script = func(n int) (uint8, int64) {
			o := row.Next(n)
			switch o.Kind {
			case conformance.OK:
				return resOK, 0
			case conformance.Hang:
				return resDropped, 0
			}
			switch o.Status {
			case 400, 404:
				return resPermanent, 0
			case 429:
				return resThrottled, int64(o.RetryAfter)
			case 503:
				return resFull, 0
			case 500:
				return resFail, 0
			}
			t.Fatalf("no simulated result for status %d", o.Status)
			return 0, 0
		}
		for i := range w.calls.n {
			w.calls.get(i).rp = p // the row's policy, state and all
		}
		w.run()
		if got := w.clients[0].attempts; got != int64(row.Attempts) {
			t.Errorf("the client counted %d attempts, want %d", got, row.Attempts)
		}
	})
}
