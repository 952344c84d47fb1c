// Package demo is recoil's main demonstration, the job behind `recoil demo`:
// callers against a payment gateway that is down for 700 ms, counted from
// the receiving side (docs/why.md, section 6) — run on real loopback HTTP with
// the real gateway, load driver and Transport, and beside it the
// simulator's prediction for the same setup.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/recoil-go/recoil/gateway"
	"github.com/recoil-go/recoil/internal/chart"
	"github.com/recoil-go/recoil/internal/textfmt"
	"github.com/recoil-go/recoil/load"
	"github.com/recoil-go/recoil/policyspec"
	"github.com/recoil-go/recoil/sim"
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
	// Seed seeds the callers' jitter and the simulation.
	Seed uint64
	// Progress, if set, is told as each run starts.
	Progress func(callers int, policy string)
}

// Row is one policy at one number of callers: what the gateway counted,
// and what the simulator predicted.
type Row struct {
	Callers int    `json:"callers"`
	Policy  string `json:"policy"`
	About   string `json:"about"`
	// Measured on loopback, counted by the gateway.
	Attempts   int64         `json:"attempts"`
	Accepted   int64         `json:"accepted"`
	Peak       int64         `json:"peak"`
	AllOKAt    time.Duration `json:"-"`
	Everyone   bool          `json:"everyone_accepted"`
	Resubmits  int64         `json:"resubmitted"`
	Series     []int64       `json:"-"` // attempts per window, measured
	SimSeries  []int64       `json:"-"` // attempts per window, predicted
	SimAttempt int64         `json:"sim_attempts"`
	SimPeak    int64         `json:"sim_peak"`
	SimAllOKAt time.Duration `json:"-"`
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
		c.Window = gateway.DefaultWindow
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// Run runs the experiment: for every number of callers and every policy, a
// fresh gateway on 127.0.0.1:0 and a load run whose callers each repeat
// their logical request until it is accepted; then the simulation of the
// same setup.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	for _, n := range cfg.Callers {
		if n <= 0 {
			return nil, fmt.Errorf("demo: callers must be positive, got %d", n)
		}
	}
	rep := &Report{Outage: cfg.Outage, Window: cfg.Window}
	for _, n := range cfg.Callers {
		for _, name := range cfg.Policies {
			if cfg.Progress != nil {
				cfg.Progress(n, name)
			}
			row, err := measure(ctx, cfg, n, name)
			if err != nil {
				return nil, err
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	if err := predict(ctx, cfg, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// measure runs one policy at n callers against a fresh gateway.
func measure(ctx context.Context, cfg Config, n int, name string) (Row, error) {
	pol, err := load.Preset(name)
	if err != nil {
		return Row{}, err
	}
	g := gateway.New(gateway.Config{Window: cfg.Window, Outages: []gateway.Outage{{Duration: cfg.Outage}}})
	url, stop, err := g.Start()
	if err != nil {
		return Row{}, err
	}
	res, err := load.Run(ctx, load.Config{
		URL:           url + "/v1/charges",
		Callers:       n,
		UntilAccepted: true,
		Duration:      30 * time.Second,
		Policy:        pol,
		Window:        cfg.Window,
		Seed:          cfg.Seed,
	})
	st := g.Stats()
	if serr := stop(); serr != nil {
		return Row{}, serr
	}
	if err != nil {
		return Row{}, err
	}
	row := Row{
		Callers: n, Policy: name, About: pol.About,
		Attempts: st.Attempts, Accepted: st.Accepted, Peak: st.Peak,
		AllOKAt: res.AllOKAt, Everyone: res.AllOK && res.OK == int64(n),
		Resubmits: res.Resubmitted,
	}
	for _, w := range st.Series {
		row.Series = append(row.Series, w.Attempts)
	}
	return row, nil
}

// scenario is the simulation of the experiment: the same callers, outage,
// pause before a caller begins again (load.DefaultPause) and policies — the
// very presets the load runs use, as values of the one policy language.
func scenario(cfg Config) (*sim.Scenario, error) {
	vals := make([]string, len(cfg.Callers))
	for i, n := range cfg.Callers {
		vals[i] = strconv.Itoa(n)
	}
	answer := sim.Dist{Kind: sim.DistNormal, Mean: time.Millisecond, Stddev: 200 * time.Microsecond}
	s := &sim.Scenario{
		Name:        "demo",
		Description: "recoil demo's setup, simulated",
		Seed:        cfg.Seed,
		Window:      cfg.Window,
		Duration:    30 * time.Second,
		Sweep:       &sim.Sweep{Path: "clients[callers].callers", Values: vals},
		Services: []sim.ServiceSpec{{
			Name:     "gateway",
			Service:  answer,
			FailTime: answer,
			Outages:  []sim.Outage{{Duration: cfg.Outage}},
		}},
		Clients: []sim.ClientSpec{{
			Name:     "callers",
			Target:   "gateway",
			Callers:  cfg.Callers[0],
			Calls:    1,
			Start:    sim.Dist{Kind: sim.DistUniform, Max: 2 * time.Millisecond},
			Resubmit: sim.Constant(load.DefaultPause),
			// The load driver's callers share one policy: one budget, one breaker.
			SharedPolicy: true,
		}},
	}
	for _, name := range cfg.Policies {
		ps, err := policyspec.Preset(name)
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		s.Policies = append(s.Policies, ps)
	}
	return s, nil
}

// predict runs the simulation and fills in the rows' predictions.
func predict(ctx context.Context, cfg Config, rep *Report) error {
	s, err := scenario(cfg)
	if err != nil {
		return err
	}
	res, err := sim.Run(ctx, s, sim.Options{Seed: cfg.Seed})
	if err != nil {
		return err
	}
	for _, run := range res.Runs {
		for i := range rep.Rows {
			r := &rep.Rows[i]
			if strconv.Itoa(r.Callers) != run.SweepValue || r.Policy != run.Policy {
				continue
			}
			r.SimAttempt, r.SimPeak, r.SimAllOKAt = run.Attempts, run.Peak, run.Latency.Max
			for _, svc := range run.Services {
				if svc.Name == "gateway" {
					for _, smp := range svc.Series {
						r.SimSeries = append(r.SimSeries, smp.Arrivals)
					}
				}
			}
		}
	}
	return nil
}

// WriteText writes the report as a table, measured beside predicted, and
// the ratios that compare the policies. It states what was counted; it
// does not grade it.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "recoil demo: a payment-gateway outage on real loopback HTTP — callers against a gateway that is down for %v,\n", r.Outage)
	fmt.Fprintf(w, "counted by the gateway; each caller repeats its request until it is accepted.\n\n")
	fmt.Fprintf(w, "%-7s  %-12s  %8s  %8s  %10s  %14s  |  %12s  %14s  %18s\n",
		"callers", "policy", "attempts", "accepted", "peak/"+fmtDur(r.Window), "all accepted at", "sim attempts", "sim peak/"+fmtDur(r.Window), "sim all accepted at")
	for _, row := range r.Rows {
		acc := fmt.Sprint(row.Accepted)
		if !row.Everyone {
			acc += " (not all)"
		}
		fmt.Fprintf(w, "%-7d  %-12s  %8d  %8s  %10d  %14s  |  %12d  %14d  %18s\n",
			row.Callers, row.Policy, row.Attempts, acc, row.Peak, fmtDur(row.AllOKAt), row.SimAttempt, row.SimPeak, fmtDur(row.SimAllOKAt))
	}
	fmt.Fprintln(w)
	for _, n := range r.callers() {
		base, ok := r.row(n, load.PresetImmediate)
		if !ok {
			continue
		}
		for _, row := range r.Rows {
			if row.Callers != n || row.Policy == load.PresetImmediate || row.Attempts == 0 || row.Peak == 0 {
				continue
			}
			fmt.Fprintf(w, "%d callers, %s against immediate: attempts ÷%.1f, peak ÷%.1f (simulated: ÷%.1f, ÷%.1f)\n", n, row.Policy,
				ratio(base.Attempts, row.Attempts), ratio(base.Peak, row.Peak), ratio(base.SimAttempt, row.SimAttempt), ratio(base.SimPeak, row.SimPeak))
		}
	}
	fmt.Fprintln(w, "\nThe table reports what the gateway counted; the simulator's columns are its prediction of the same setup.")
	return nil
}

// PeakFactor is immediate's peak divided by policy's at n callers.
func (r *Report) PeakFactor(n int, policy string) float64 {
	a, ok1 := r.row(n, load.PresetImmediate)
	b, ok2 := r.row(n, policy)
	if !ok1 || !ok2 {
		return 0
	}
	return ratio(a.Peak, b.Peak)
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
