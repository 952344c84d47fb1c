package sim_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/recoil-go/recoil/tools/sim"
)

// A cancelled run returns the runs it finished, for a caller to show what
// was done, and the context's cause.
func TestRunCanceledKeepsFinishedRuns(t *testing.T) {
	s, err := sim.Parse("slow", []byte(`name: slow
duration: 10h
policies: [{name: a}, {name: b}]
services: [{name: s, workers: 4, service: 1ms}]
clients: [{name: c, target: s, rate: 1/min}]
sweep: {path: "clients[c].rate", values: [1/min, 5000/s]}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		cancelAt float64 // the share of the work done when the context is cancelled
		wantRuns []string
	}{
		{"before the first run", 0, nil},
		{"in the first run at 5000/s", 0.5, []string{"a@1/min", "b@1/min"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(t.Context())
			stop := errors.New("stop")
			if tt.cancelAt == 0 {
				cancel(stop)
			}
			res, err := sim.Run(ctx, s, sim.Options{Progress: func(done float64) {
				if done > tt.cancelAt && tt.cancelAt > 0 {
					cancel(stop)
				}
			}})
			if !errors.Is(err, stop) || res == nil {
				t.Fatalf("Run = %v, %v; want a result and the cause", res, err)
			}
			var got []string
			for _, r := range res.Runs {
				got = append(got, r.Policy+"@"+r.SweepValue)
			}
			if !slices.Equal(got, tt.wantRuns) {
				t.Errorf("runs %v, want %v", got, tt.wantRuns)
			}
		})
	}
}
