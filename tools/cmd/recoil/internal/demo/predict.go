package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/recoil-go/recoil/tools/load"
	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/sim"
)

// simSample is the simulation's sampling interval: fine enough to find the
// busiest span of the window wherever it begins, as the gateway does.
const simSample = 5 * time.Millisecond

// scenario is the simulation of the experiment: the same callers, all
// beginning at once (startGate), outage, pause before a caller begins again
// (load.DefaultPause) and policies — the very presets the load runs use, as
// values of the one policy language.
func scenario(cfg Config, callers int, m Machine, policies []string) (*sim.Scenario, error) {
	answer := sim.Constant(m.RoundTrip)
	s := &sim.Scenario{
		Name:        "demo",
		Description: "recoil demo's setup, simulated",
		Seed:        cfg.Seed,
		Window:      cfg.Window,
		Sample:      simSample,
		Duration:    runFor(cfg),
		// The callers' own jitter stream: a run and its simulation with the
		// same seed draw the same waits.
		JitterSource: load.JitterSource,
		Services: []sim.ServiceSpec{{
			Name:     "gateway",
			Service:  answer,
			FailTime: answer,
			// The gateway answers an outage with a 503: overloaded.
			Outages: []sim.Outage{{Duration: cfg.Outage, Class: "overloaded"}},
		}},
		Clients: []sim.ClientSpec{{
			Name:    "callers",
			Target:  "gateway",
			Callers: callers,
			// Loopback: the machine, one attempt at a time at its measured pace.
			Serial: &sim.Serial{Time: sim.Constant(m.PerAttempt)},
			Calls:  1,
			// The pause, and the machine's lateness waking the caller after it.
			Resubmit: sim.Constant(load.DefaultPause + m.RoundTrip),
			// The load driver's callers share one policy: one budget, one breaker.
			SharedPolicy: true,
		}},
	}
	for _, name := range policies {
		ps, err := policyspec.Preset(name)
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		s.Policies = append(s.Policies, ps)
	}
	return s, nil
}

// predict runs the simulation of n callers with each run's seed and fills
// in the rows' predictions. The simulated callers draw their jitter from
// the stream the real ones drew from (common random numbers), so a run and
// its prediction differ only where the model differs from the machine: a
// wait drawn long for the last caller is long in both, and three runs are
// enough to compare a median whose spread from seed to seed is a factor
// of two.
//
// Each run is predicted on every machine of machines: the row's Simulated
// figures are the calibrated machine's, and its Band spans all.
func predict(ctx context.Context, cfg Config, n int, m Machine, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	var policies []string
	for _, r := range rows {
		policies = append(policies, r.Policy)
	}
	acc := map[string]*figures{}
	bands := map[string]*bandOf{}
	series := map[string][][]int64{}
	for i, mach := range machines(m) {
		s, err := scenario(cfg, n, mach, policies)
		if err != nil {
			return err
		}
		for k := range cfg.Runs {
			res, err := sim.Run(ctx, s, sim.Options{Seed: cfg.Seed + uint64(k)})
			if err != nil {
				return err
			}
			for _, run := range res.Runs {
				var arrivals []int64
				var peak int64
				for _, svc := range run.Services {
					if svc.Name == "gateway" {
						arrivals, peak = slidingPeak(svc.Series, cfg.Window)
					}
				}
				if bands[run.Policy] == nil {
					bands[run.Policy] = &bandOf{}
				}
				bands[run.Policy].add(k, run.Attempts, peak, run.Latency.Max)
				if i > 0 {
					continue
				}
				if acc[run.Policy] == nil {
					acc[run.Policy] = &figures{}
				}
				acc[run.Policy].add(run.Attempts, peak, run.Resubmitted, run.Latency.Max, run.Unfinished == 0 && run.Failed == 0)
				series[run.Policy] = append(series[run.Policy], arrivals)
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		if f := acc[r.Policy]; f != nil {
			r.Simulated = f.summary()
			r.SimSeries = series[r.Policy][medianIndex(f.attempts)]
			r.Band = bands[r.Policy].band()
		}
	}
	return nil
}

// machines returns the machines each run is predicted on: m as
// calibrated; the same machine idle, waking its callers the moment their
// waits end (RoundTrip zero); and a busier one, twice as late as m and a
// millisecond more; and, when the pace measured after the rows differs,
// the same three at that pace. Calibration samples the machine for a
// second before the rows, and a run's lateness and pace drift from it: an
// attempt that lands within a few milliseconds of the outage's end lands
// on either side from one run of the same seed to the next, and which side
// moves when its caller is accepted by a whole wait (1.49 s or 1.72 s for
// seed 3 at 4 callers under full jitter); and how many attempts 200
// callers retrying every 20 ms get through is the machine's pace.
func machines(m Machine) []Machine {
	var ms []Machine
	paces := []time.Duration{m.PerAttempt}
	if a := m.PerAttemptAfter; a > 0 && a != m.PerAttempt {
		paces = append(paces, a)
	}
	for _, pace := range paces {
		calibrated := Machine{PerAttempt: pace, RoundTrip: m.RoundTrip}
		idle, busy := calibrated, calibrated
		idle.RoundTrip = 0
		busy.RoundTrip = 2*m.RoundTrip + time.Millisecond
		ms = append(ms, calibrated, idle, busy)
	}
	return ms
}

// slidingPeak returns a simulated service's arrivals per window, and the
// most that arrived within any span of the window beginning at a sample's
// edge — the gateway's sliding window, at the sample's resolution.
func slidingPeak(samples []sim.Sample, window time.Duration) (perWindow []int64, peak int64) {
	var in int64 // arrivals in the span ending at sample i
	from := 0
	for i, smp := range samples {
		in += smp.Arrivals
		for from < i && smp.T-(samples[from].T-samples[from].Dt) > window {
			in -= samples[from].Arrivals
			from++
		}
		peak = max(peak, in)
		w := int((smp.T - smp.Dt) / window)
		for len(perWindow) <= w {
			perWindow = append(perWindow, 0)
		}
		perWindow[w] += smp.Arrivals
	}
	return perWindow, peak
}
