// Package demo is recoil's main demonstration, the job behind `recoil demo`:
// callers against a payment gateway that is down for 700 ms, counted from
// the receiving side (docs/why.md, section 6) — run on real loopback HTTP with
// the real gateway, load driver and Transport, and beside it the
// simulator's prediction for the same setup.
package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/recoil-go/recoil/tools/load"
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
	// Next, if set, is told in words what runs next ("measuring this
	// machine's pace at 200 callers").
	Next func(what string)
	// Measured, if set, is given each row as soon as it is measured, its
	// prediction not made yet; Predicted, the rows of one number of
	// callers once they are predicted.
	Measured  func(Row)
	Predicted func([]Row)
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
	// Machine is what the calibrator measured for the row's runs; the
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
// machine (calibrator), then for every policy, Runs times, a fresh gateway
// on 127.0.0.1:0 and a load run whose callers each repeat their logical
// request until it is accepted; then the simulation of the same setup over
// the same seeds, its callers drawing the same waits.
//
// If ctx ends, Run returns the rows it finished, each with its
// prediction, and the context's cause.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	rep := &Report{Outage: cfg.Outage, Window: cfg.Window}
	cal := &calibrator{cfg: cfg}
	for _, n := range cfg.Callers {
		rows, err := runGroup(ctx, cfg, cal, n)
		rep.Rows = append(rep.Rows, rows...)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// check reports the first field of c, its defaults set, that Run refuses.
func (c *Config) check() error {
	for _, n := range c.Callers {
		if n <= 0 {
			return fmt.Errorf("demo: callers must be positive, got %d", n)
		}
	}
	if c.Runs < 0 {
		return fmt.Errorf("demo: runs must be positive, got %d", c.Runs)
	}
	for _, name := range c.Policies {
		if _, err := load.Preset(name); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}

// runGroup measures and predicts the rows of n callers: the machine, every
// policy's row, the machine's pace again, then the predictions. If ctx
// ends, it returns the rows it measured, predicted, and the cause.
func runGroup(ctx context.Context, cfg Config, cal *calibrator, n int) ([]Row, error) {
	next := func(format string, args ...any) {
		if cfg.Next != nil {
			cfg.Next(fmt.Sprintf(format, args...))
		}
	}
	next("measuring this machine's pace at %d callers (two short runs against a gateway that stays down)", n)
	mach, err := cal.before(ctx, n)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, name := range cfg.Policies {
		times := fmt.Sprintf("%d times", cfg.Runs)
		if cfg.Runs == 1 {
			times = "once"
		}
		next("running %s at %d callers, %s", name, n, times)
		row, merr := measureRow(ctx, cfg, n, name)
		if merr != nil {
			err = merr
			break
		}
		rows = append(rows, row)
		if cfg.Measured != nil {
			cfg.Measured(row)
		}
	}
	if err == nil {
		next("measuring this machine's pace at %d callers again, then simulating the runs", n)
	}
	if err == nil {
		// The machine's pace again, after the rows: it drifts while they
		// run, and each run is predicted at both (see machines). If it
		// cannot be measured, the rows are predicted at the first.
		after, aerr := cal.after(ctx, n)
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
		return nil, perr
	}
	if cfg.Predicted != nil && len(rows) > 0 {
		cfg.Predicted(rows)
	}
	return rows, err
}
