package pace

import (
	"testing"
	"time"
)

func TestPace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tests := []struct {
		name  string
		steps func(p *Pace) []bool // Allow at each probe
		want  []bool
	}{
		{"the zero Pace allows", func(p *Pace) []bool { return []bool{p.Allow(t0), p.Allow(at(time.Hour))} }, []bool{true, true}},
		{"10 units over 10 s: one a second", func(p *Pace) []bool {
			p.Set(t0, 10, 10*time.Second)
			a := p.Allow(t0)
			p.Settle(t0, 1)
			return []bool{a, p.Allow(at(500 * time.Millisecond)), p.Allow(at(time.Second))}
		}, []bool{true, false, true}},
		{"nothing remains: nothing until the reset", func(p *Pace) []bool {
			p.Set(t0, 0, 5*time.Second)
			return []bool{p.Allow(t0), p.Allow(at(4 * time.Second)), p.Allow(at(5 * time.Second))}
		}, []bool{false, false, true}},
		{"a refund lets the next go sooner", func(p *Pace) []bool {
			p.Set(t0, 10, 10*time.Second)
			p.Settle(t0, 3) // 3 s owed
			a := p.Allow(at(time.Second))
			p.Settle(at(time.Second), -2) // 2 of them given back
			return []bool{a, p.Allow(at(time.Second))}
		}, []bool{false, true}},
		{"a charge past the reset holds until it", func(p *Pace) []bool {
			p.Set(t0, 10, 10*time.Second)
			p.Settle(t0, 100)
			return []bool{p.Allow(at(9 * time.Second)), p.Allow(at(10 * time.Second))}
		}, []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Pace
			got := tt.steps(&p)
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("probe %d: Allow = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
