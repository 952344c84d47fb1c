// Package demo is recoil's main demonstration, the job behind `recoil demo`:
// callers against a payment gateway that is down for 700 ms, counted from
// the receiving side (docs/why.md, section 6) — run on real loopback HTTP with
// the real gateway, load driver and Transport, and beside it the
// simulator's prediction for the same setup.
package demo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/internal/textfmt"
	"github.com/recoil-go/recoil/tools/load"
	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/sim"
	"github.com/recoil-go/recoil/tools/tally"
)

// Config sets up the experiment. Its zero fields mean the values of
// docs/why.md, section 6.
type Config struct {
	// Callers lists the numbers of closed-loop callers to run; nil means 4
	// (the classic experiment's) and 200.
	Callers []int
	// Outage is how long the gateway is down from the first attempt; zero
	// means 700 ms.
	Outage time.Duration
	// Policies names load presets to compare; nil means immediate (20 ms),
	// full-jitter (60 ms base) and default (recoil's default policy, plus a
	// breaker with a 1 s open period).
	Policies []string
	// Window is the span the peak is counted over; zero means 200 ms.
	Window time.Duration
	// Runs is how many times each row is measured, each with its own seed
	// (Seed, Seed+1, …), for a median and a range; zero means DefaultRuns.
	// The simulator predicts each run with the run's seed, and its callers
	// draw the same jitter the real callers drew (load.JitterSource).
	Runs int
	// Seed seeds the callers' jitter and the simulation.
	Seed uint64
	// Progress, if set, is told as each run starts.
	Progress func(callers int, policy string)
}

// DefaultRuns is how many times a row is measured when Config.Runs is zero.
const DefaultRuns = 3

// Row is one policy at one number of callers: what the gateway counted,
// and what the simulator predicted.
type Row struct {
	Callers int    `json:"callers"`
	Policy  string `json:"policy"`
	About   string `json:"about"`
	// Runs is how many times the row was measured.
	Runs int `json:"runs"`
	// Measured is what the gateway counted on loopback.
	Measured Figures `json:"measured"`
	// Simulated is the simulator's prediction of the same setup.
	Simulated Figures `json:"simulated"`
	// Band is the range of the simulator's medians when each run is
	// predicted on a machine idler or busier than calibrated (see the
	// Band type).
	Band Band `json:"simulated_band"`
	// Machine is what calibrate measured before the row's runs; the
	// simulation models the loopback with it.
	Machine Machine `json:"machine"`
	// Series and SimSeries are the attempts in each window of the run
	// whose attempts were the median, measured and simulated.
	Series    []int64 `json:"-"`
	SimSeries []int64 `json:"-"`
}

// Report is the experiment's result.
type Report struct {
	Outage time.Duration `json:"-"`
	Window time.Duration `json:"-"`
	Rows   []Row         `json:"rows"`
}

func (c *Config) defaults() {
	if c.Callers == nil {
		c.Callers = []int{4, 200}
	}
	if c.Outage == 0 {
		c.Outage = 700 * time.Millisecond
	}
	if c.Policies == nil {
		c.Policies = []string{load.PresetImmediate, load.PresetFullJitter, load.PresetDefault}
	}
	if c.Window == 0 {
		c.Window = tally.DefaultWindow
	}
	if c.Runs == 0 {
		c.Runs = DefaultRuns
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// Run runs the experiment: for every number of callers, a measure of the
// machine (calibrate), then for every policy, Runs times, a fresh gateway
// on 127.0.0.1:0 and a load run whose callers each repeat their logical
// request until it is accepted; then the simulation of the same setup over
// the same seeds, its callers drawing the same waits.
//
// If ctx ends, Run returns the rows it finished, each with its
// prediction, and the context's cause.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	for _, n := range cfg.Callers {
		if n <= 0 {
			return nil, fmt.Errorf("demo: callers must be positive, got %d", n)
		}
	}
	if cfg.Runs < 0 {
		return nil, fmt.Errorf("demo: runs must be positive, got %d", cfg.Runs)
	}
	for _, name := range cfg.Policies {
		if _, err := load.Preset(name); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	rep := &Report{Outage: cfg.Outage, Window: cfg.Window}
	for _, n := range cfg.Callers {
		mach, err := calibrate(ctx, cfg, n)
		if err != nil {
			return rep, err
		}
		var rows []Row
		for _, name := range cfg.Policies {
			if cfg.Progress != nil {
				cfg.Progress(n, name)
			}
			row, merr := measureRow(ctx, cfg, n, name)
			if merr != nil {
				err = merr
				break
			}
			rows = append(rows, row)
		}
		if err == nil {
			// The machine's pace again, after the rows: it drifts while they
			// run, and each run is predicted at both (see machines). If it
			// cannot be measured, the rows are predicted at the first.
			after, aerr := perAttempt(ctx, cfg, n)
			switch {
			case aerr == nil:
				mach.PerAttemptAfter = after
			case ctx.Err() != nil:
				err = aerr // interrupted: the rows are still predicted
			}
		}
		for i := range rows {
			rows[i].Machine = mach
		}
		// Rows measured before an interruption are still predicted: the
		// simulation takes a moment, and the table shows them.
		if perr := predict(context.WithoutCancel(ctx), cfg, n, mach, rows); perr != nil {
			return rep, perr
		}
		rep.Rows = append(rep.Rows, rows...)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// calibrationRun is how long each of calibrate's runs lasts.
const calibrationRun = time.Second

// calibrationCallers is how many callers calibrate saturates the machine
// with (or the row's callers, if more).
const calibrationCallers = 200

// Machine is what calibrate measured of this machine: how much it can
// carry, and what an attempt costs a lone caller. The simulator models the
// loopback with it — a transport that carries one attempt at a time for
// PerAttempt (sim.Serial), and a gateway that answers in RoundTrip — so
// that what a run can send on this machine (200 callers retrying every
// 20 ms ask for 10,000 attempts a second) bounds the prediction as it
// bounds the count.
type Machine struct {
	// PerAttempt is the machine's time per attempt when it is the
	// bottleneck: calibrationRun divided by the attempts the gateway
	// counted from calibrationCallers callers retrying every 20 ms.
	PerAttempt time.Duration
	// RoundTrip is what an attempt adds to a lone caller's 20 ms cycle
	// beyond PerAttempt: the answer's way back and the caller's wake-up
	// after its wait, which a busy machine makes late.
	RoundTrip time.Duration
	// PerAttemptAfter is PerAttempt measured again after the rows' runs;
	// zero if the runs were interrupted or it could not be measured.
	PerAttemptAfter time.Duration
}

// calibrate measures the machine (see Machine) with two runs against a
// gateway that is down throughout, exactly as the demo's runs send their
// attempts: max(n, calibrationCallers) callers retrying every 20 ms, then
// one.
func calibrate(ctx context.Context, cfg Config, n int) (Machine, error) {
	per, err := perAttempt(ctx, cfg, n)
	if err != nil {
		return Machine{}, err
	}
	one, _, err := countDown(ctx, cfg, 1)
	if err != nil {
		return Machine{}, err
	}
	m := Machine{PerAttempt: per}
	wait, _ := policyspec.Preset(load.PresetImmediate)
	m.RoundTrip = max(0, one-wait.Backoff.Base-m.PerAttempt)
	return m, nil
}

// perAttempt measures Machine.PerAttempt: max(n, calibrationCallers)
// callers retrying every 20 ms against a gateway that is down throughout.
func perAttempt(ctx context.Context, cfg Config, n int) (time.Duration, error) {
	_, windows, err := countDown(ctx, cfg, max(n, calibrationCallers))
	if err != nil {
		return 0, err
	}
	// The windows after the first, in which the connections were opened,
	// and before the last, which the run's end cut short.
	var sum int64
	if len(windows) < 3 {
		return 0, errors.New("demo: the calibration run was too short to measure")
	}
	for _, a := range windows[1 : len(windows)-1] {
		sum += a
	}
	if sum == 0 {
		return 0, errors.New("demo: the calibration run sent nothing")
	}
	return cfg.Window * time.Duration(len(windows)-2) / time.Duration(sum), nil
}

// countDown runs n callers of the immediate preset for calibrationRun
// against a gateway that is down throughout, and returns the time between
// the first attempt sent and the last, over the attempts in between (the
// time per attempt), and the attempts the gateway counted in each window.
func countDown(ctx context.Context, cfg Config, n int) (time.Duration, []int64, error) {
	pol, err := load.Preset(load.PresetImmediate)
	if err != nil {
		return 0, nil, err
	}
	g, err := gateway.New(gateway.Config{Window: cfg.Window, Outages: []gateway.Outage{{Duration: time.Hour}}})
	if err != nil {
		return 0, nil, err
	}
	url, stop, err := g.Start()
	if err != nil {
		return 0, nil, err
	}
	base := newBase(n)
	defer base.CloseIdleConnections()
	gate := newStartGate(base, n)
	_, err = load.Run(ctx, load.Config{
		URL: url + "/v1/charges", Callers: n, Duration: calibrationRun,
		Policy: pol, Window: cfg.Window, Seed: cfg.Seed, Base: gate,
	})
	st := g.Stats()
	if serr := stop(); serr != nil {
		return 0, nil, serr
	}
	if err != nil {
		return 0, nil, err
	}
	pace := gate.pace()
	if pace <= 0 {
		return 0, nil, errors.New("demo: the calibration run sent fewer than two attempts")
	}
	var windows []int64
	for _, w := range st.Series {
		windows = append(windows, w.Attempts)
	}
	return pace, windows, nil
}

// newBase returns the transport a run's callers send their attempts over,
// with a connection per caller.
func newBase(n int) *http.Transport {
	conns := max(n, 64)
	return &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 30 * time.Second}
}

// measured is one load run's count.
type measured struct {
	attempts, peak, resubmits int64
	allOK                     time.Duration
	everyone                  bool
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
		everyone: res.AllOK && res.OK == int64(n) && st.Accepted == int64(n)}
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

// WriteText writes the report as a table, each row measured and then
// predicted, and the ratios that compare the policies. It states what was
// counted; it does not grade it.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "recoil demo: a payment-gateway outage on real loopback HTTP — callers against a gateway that is down for %v,\n", r.Outage)
	fmt.Fprintf(w, "counted by the gateway; each caller repeats its request until it is accepted. Each figure is the median over\n")
	fmt.Fprintf(w, "the runs, with the least and the most in brackets; the simulator's line predicts the same runs: the same seeds, its callers drawing the same random waits.\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "callers\tpolicy\t\truns\tattempts\tpeak/%s\tall accepted at\tbegun again\n", fmtDur(r.Window))
	for _, row := range r.Rows {
		for _, line := range []struct {
			what string
			runs int
			f    Figures
		}{{"measured", row.Runs, row.Measured}, {"simulated", len(row.Simulated.Attempts.Values), row.Simulated}} {
			callers, policy := strconv.Itoa(row.Callers), row.Policy
			if line.what == "simulated" {
				callers, policy = "", ""
			}
			at := line.f.AllOKAt.String()
			if !line.f.Everyone {
				at += " (not all accepted)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", callers, policy, line.what, line.runs,
				line.f.Attempts, line.f.Peak, at, line.f.Resubmitted)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, n := range r.callers() {
		base, ok := r.row(n, load.PresetImmediate)
		if !ok {
			continue
		}
		for _, row := range r.Rows {
			if row.Callers != n || row.Policy == load.PresetImmediate || row.Measured.Attempts.Median == 0 || row.Measured.Peak.Median == 0 {
				continue
			}
			fmt.Fprintf(w, "%d callers, %s against immediate: attempts ÷%.1f, peak ÷%.1f (simulated: ÷%.1f, ÷%.1f)\n", n, row.Policy,
				ratio(base.Measured.Attempts.Median, row.Measured.Attempts.Median), ratio(base.Measured.Peak.Median, row.Measured.Peak.Median),
				ratio(base.Simulated.Attempts.Median, row.Simulated.Attempts.Median), ratio(base.Simulated.Peak.Median, row.Simulated.Peak.Median))
		}
	}
	if notes := r.bandNotes(); len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	fmt.Fprintln(w, "\n\"begun again\" counts logical requests a caller began again after its retry loop gave up; most were refused")
	fmt.Fprintln(w, "by the open breaker before any attempt was sent, so the gateway never saw them.")
	return nil
}

// agreement is how close a measured median and its prediction are said
// to agree: within 15 %, or one count (a peak of 5 against 6 is one attempt
// across a window's edge).
const agreement = 0.15

// agrees reports whether got is within agreement of want, or one of it.
func agrees(got, want int64) bool {
	d := float64(got - want)
	tol := max(agreement*float64(want), 1)
	return d <= tol && -d <= tol
}

// bandNotes explains each figure whose measured median and calibrated
// prediction do not agree, with what the simulator predicts on a machine
// idler or busier than calibrated (Row.Band).
func (r *Report) bandNotes() []string {
	var notes []string
	count := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, row := range r.Rows {
		m, s, b := row.Measured, row.Simulated, row.Band
		for _, f := range []struct {
			what              string
			got, want, lo, hi int64
			show              func(int64) string
		}{
			{"attempts", m.Attempts.Median, s.Attempts.Median, b.Attempts[0], b.Attempts[1], count},
			{"peak", m.Peak.Median, s.Peak.Median, b.Peak[0], b.Peak[1], count},
			{"all accepted at", int64(m.AllOKAt.Median), int64(s.AllOKAt.Median), int64(b.AllOKAt[0]), int64(b.AllOKAt[1]),
				func(v int64) string { return textfmt.Duration(time.Duration(v)) }},
		} {
			if f.want == 0 || f.got == 0 || agrees(f.got, f.want) {
				// Zero is no figure: no attempts counted, or not everyone accepted.
				continue
			}
			head := fmt.Sprintf("%d callers, %s: %s %s measured against %s simulated", row.Callers, row.Policy, f.what, f.show(f.got), f.show(f.want))
			if f.lo == f.hi {
				// No machine simulated moves it: the runs met another.
				notes = append(notes, fmt.Sprintf("%s; the same on every machine simulated, from idle to twice as late as calibrated %s: the machine's pace during the runs was not what it was around them",
					head, paceText(row.Machine)))
				continue
			}
			notes = append(notes, fmt.Sprintf("%s; simulated from idle to twice as late as calibrated %s: %s–%s", head, paceText(row.Machine), f.show(f.lo), f.show(f.hi)))
		}
	}
	return notes
}

// paceText says at which paces the machines were simulated.
func paceText(m Machine) string {
	if a := m.PerAttemptAfter; a > 0 && a != m.PerAttempt {
		return fmt.Sprintf("at %s and %s an attempt, the pace before the rows and after", textfmt.Duration(m.PerAttempt), textfmt.Duration(a))
	}
	return fmt.Sprintf("at %s an attempt, the pace measured before the rows", textfmt.Duration(m.PerAttempt))
}

// PeakFactor is immediate's peak divided by policy's at n callers.
func (r *Report) PeakFactor(n int, policy string) float64 {
	a, ok1 := r.row(n, load.PresetImmediate)
	b, ok2 := r.row(n, policy)
	if !ok1 || !ok2 {
		return 0
	}
	return ratio(a.Measured.Peak.Median, b.Measured.Peak.Median)
}

func (r *Report) row(n int, policy string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Callers == n && row.Policy == policy {
			return row, true
		}
	}
	return Row{}, false
}

func (r *Report) callers() []int {
	var ns []int
	for _, row := range r.Rows {
		if !slices.Contains(ns, row.Callers) {
			ns = append(ns, row.Callers)
		}
	}
	return ns
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func fmtDur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return textfmt.Duration(d)
}

// chartNames are the policies as the chart's legend names them.
var chartNames = map[string]string{
	load.PresetImmediate:   "retry every 20 ms",
	load.PresetFullJitter:  "full jitter from 60 ms",
	load.PresetExponential: "exponential from 60 ms",
	load.PresetDefault:     "recoil default",
}

// WriteChart draws the attempts the gateway counted in each window at the
// largest number of callers, measured (solid) and simulated (dashed), one
// colour per policy, with the outage shaded. format is "svg" or "png".
func (r *Report) WriteChart(w io.Writer, format string) error {
	fig, err := r.figure()
	if err != nil {
		return err
	}
	return fig.WriteTo(w, format)
}

// figure builds the chart WriteChart draws.
func (r *Report) figure() (*chart.Figure, error) {
	ns := r.callers()
	if len(ns) == 0 {
		return nil, errors.New("demo: nothing to chart")
	}
	n := slices.Max(ns)
	win := chart.Duration(r.Window)
	p := chart.NewPanel("", "time since the first attempt (s)", "attempts per "+win+" window")
	outage := chart.Band{From: 0, To: r.Outage.Seconds(), Label: "gateway down"}
	p.Add(outage)
	fig := &chart.Figure{
		Title:         fmt.Sprintf("%d callers, gateway down for %s: attempts it counted per %s window", n, chart.Duration(r.Outage), win),
		Panels:        []*plot.Plot{p},
		LegendColumns: 2,
		Width:         8 * vg.Inch,
		Height:        4.5 * vg.Inch,
	}
	var top, end float64
	i := 0
	for _, row := range r.Rows {
		if row.Callers != n {
			continue
		}
		name := row.Policy
		if s, ok := chartNames[name]; ok {
			name = s
		}
		for _, s := range []struct {
			series []int64
			label  string
			dashed bool
		}{{row.Series, name + ", measured", false}, {row.SimSeries, name + ", simulated", true}} {
			if len(s.series) == 0 {
				continue
			}
			bins := make([]chart.Bin, len(s.series))
			for k, v := range s.series {
				from := (time.Duration(k) * r.Window).Seconds()
				bins[k] = chart.Bin{From: from, To: from + r.Window.Seconds(), Y: float64(v)}
				top = max(top, float64(v))
			}
			end = max(end, bins[len(bins)-1].To)
			// The run ended after its last window: the line returns to zero.
			bins = append(bins, chart.Bin{From: bins[len(bins)-1].To, To: bins[len(bins)-1].To})
			l, err := chart.StepLine(bins, chart.Color(i), s.dashed)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			fig.Legend = append(fig.Legend, chart.Entry{Label: s.label, Thumbs: []plot.Thumbnailer{l}})
		}
		i++
	}
	fig.Legend = append(fig.Legend, chart.Entry{Label: "gateway down, the first " + chart.Duration(r.Outage), Thumbs: []plot.Thumbnailer{outage}})
	p.X.Min, p.X.Max = chart.Extend(0, max(end, r.Outage.Seconds()))
	p.Y.Min, p.Y.Max = 0, chart.Top(top)
	return fig, nil
}
