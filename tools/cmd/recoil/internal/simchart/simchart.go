// Package simchart draws the simulator's results as charts for recoil sim
// -o: one line per policy, over time (one panel per sweep value) or
// against a numeric sweep, through package chart. It is the command's
// own: package sim keeps the data (sim.Result), and has no plotting
// dependency.
package simchart

import (
	"fmt"
	"io"

	"gonum.org/v1/plot/vg"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/sim"
)

// Chart metrics. Over time (one line per policy, one panel per sweep
// value): Attempts, Throttled, Succeeded (each counted per peak window, as
// the tables count), Queue, Busy. Against a numeric sweep (one line per
// policy): Attempts (in all), PerCall, Peak, P99, Max, Goodput, Failed.
const (
	Attempts  = "attempts"
	Throttled = "throttled"
	Succeeded = "succeeded"
	Queue     = "queue"
	Busy      = "busy"
	PerCall   = "per-call"
	Peak      = "peak"
	P99       = "p99"
	Max       = "max"
	Goodput   = "goodput"
	Failed    = "failed"
)

// Options choose what Write draws. The zero value charts the
// target's attempts: per window over time, or against the sweep's values
// when the scenario sweeps at least three numbers.
type Options struct {
	// Format is "svg" (the default) or "png".
	Format string
	// Metric is one of the metric constants; empty means Attempts.
	Metric string
	// Service is the service a time series is read from; empty means the
	// result's target.
	Service string
	// OverTime forces a time series even for a sweep.
	OverTime bool
}

// Write draws r with gonum.org/v1/plot and writes it to w as SVG or PNG. Axis titles say in words what is counted and in what unit; a
// time series counts per window, as the tables do, shades every outage,
// and draws one panel per sweep value; the legend sits below the panels.
func Write(w io.Writer, r *sim.Result, o Options) error {
	fig, err := figure(r, o)
	if err != nil {
		return err
	}
	format := o.Format
	if format == "" {
		format = "svg"
	}
	return fig.WriteTo(w, format)
}

// figure builds the chart Write draws.
func figure(r *sim.Result, o Options) (*chart.Figure, error) {
	if o.Format != "" && o.Format != "svg" && o.Format != "png" {
		return nil, fmt.Errorf("simchart: format %q: want svg or png", o.Format)
	}
	metric := o.Metric
	if metric == "" {
		metric = Attempts
	}
	if !o.OverTime && numericSweep(r) && sweepMetric(metric) {
		return sweepChart(r, metric)
	}
	return timeChart(r, metric, o.Service)
}

// Figure sizes.
const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 5 * vg.Inch
	rowHeight   = 2.6 * vg.Inch // each further row of panels
)

// policyName is the legend's name for a run's policy.
func policyName(name string) string {
	if name == "" {
		return "the clients' own policies"
	}
	return name
}

func serviceNamed(run *sim.RunResult, name string) *sim.ServiceResult {
	for j := range run.Services {
		if run.Services[j].Name == name {
			return &run.Services[j]
		}
	}
	return nil
}
