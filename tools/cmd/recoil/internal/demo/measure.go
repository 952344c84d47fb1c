package demo

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/load"
)

// measured is one load run's count.
type measured struct {
	attempts, peak, resubmits int64
	allOK                     time.Duration
	everyone                  bool
	stopped                   string // load.Result.Stopped
	series                    []int64
}

// measureRow measures one policy at n callers Runs times.
func measureRow(ctx context.Context, cfg Config, n int, name string) (Row, error) {
	pol, err := load.Preset(name)
	if err != nil {
		return Row{}, err
	}
	row := Row{Callers: n, Policy: name, About: pol.About, Runs: cfg.Runs}
	var f figures
	var runs []measured
	for k := range cfg.Runs {
		m, err := measure(ctx, cfg, n, name, cfg.Seed+uint64(k))
		if err != nil {
			return Row{}, err
		}
		f.add(m.attempts, m.peak, m.resubmits, m.allOK, m.everyone)
		runs = append(runs, m)
	}
	row.Measured = f.summary()
	row.Series = runs[medianIndex(f.attempts)].series
	return row, nil
}

// medianIndex returns the index of the median of vs (the lower middle
// one, for an even number).
func medianIndex(vs []int64) int {
	idx := make([]int, len(vs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(vs[a], vs[b]) })
	return idx[(len(idx)-1)/2]
}

// measure runs one policy at n callers against a fresh gateway, the
// callers' first attempts held until all are ready (startGate).
func measure(ctx context.Context, cfg Config, n int, name string, seed uint64) (measured, error) {
	pol, err := load.Preset(name)
	if err != nil {
		return measured{}, err
	}
	g, err := gateway.New(gateway.Config{Window: cfg.Window, Seed: seed, Outages: []gateway.Outage{{Duration: cfg.Outage}}})
	if err != nil {
		return measured{}, err
	}
	url, stop, err := g.Start()
	if err != nil {
		return measured{}, err
	}
	base := newBase(n)
	defer base.CloseIdleConnections()
	res, err := load.Run(ctx, load.Config{
		URL:           url + "/v1/charges",
		Callers:       n,
		UntilAccepted: true,
		Duration:      runFor(cfg),
		MaxRequests:   maxRequests(cfg, n),
		Policy:        pol,
		Window:        cfg.Window,
		Seed:          seed,
		Base:          newStartGate(base, n),
	})
	st := g.Stats()
	if serr := stop(); serr != nil {
		return measured{}, serr
	}
	if err != nil {
		return measured{}, err
	}
	m := measured{attempts: st.Attempts, peak: st.Peak, resubmits: res.Resubmitted, allOK: res.AllOKAt,
		everyone: res.AllOK && res.OK == int64(n) && st.Accepted == int64(n), stopped: res.Stopped}
	for _, w := range st.Series {
		m.series = append(m.series, w.Attempts)
	}
	return m, nil
}

// afterOutage is how long a run may go on after the outage ends for every
// caller to be accepted; a run, measured or simulated, ends then.
const afterOutage = 30 * time.Second

// runFor is how long a run of cfg may last: the outage and afterOutage.
func runFor(cfg Config) time.Duration { return cfg.Outage + afterOutage }

// maxRequests bounds a measured run's logical requests above what n
// callers can begin in runFor, one every load.DefaultPause each at most
// (a caller whose breaker is open begins again after each pause): the
// load driver's default bound, 10,000, is reached in a second by 1,000
// callers under the default policy, and the run would stop with most of
// them never accepted.
func maxRequests(cfg Config, n int) int {
	return n * int(runFor(cfg)/load.DefaultPause+1)
}
