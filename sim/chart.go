package sim

import (
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Chart metrics. Over time (one line per run): ChartAttempts, ChartThrottled,
// ChartSucceeded (each per second), ChartQueue, ChartBusy. Against a numeric
// sweep (one line per policy): ChartAttempts (in all), ChartPerCall,
// ChartPeak, ChartP99, ChartMax, ChartGoodput, ChartFailed.
const (
	ChartAttempts  = "attempts"
	ChartThrottled = "throttled"
	ChartSucceeded = "succeeded"
	ChartQueue     = "queue"
	ChartBusy      = "busy"
	ChartPerCall   = "per-call"
	ChartPeak      = "peak"
	ChartP99       = "p99"
	ChartMax       = "max"
	ChartGoodput   = "goodput"
	ChartFailed    = "failed"
)

// ChartOptions choose what WriteChart draws. The zero value charts the
// target's attempts: per second over time, or against the sweep's values
// when the scenario sweeps at least three numbers.
type ChartOptions struct {
	// Format is "svg" (the default) or "png".
	Format string
	// Metric is one of the Chart* constants; empty means ChartAttempts.
	Metric string
	// Service is the service a time series is read from; empty means the
	// result's target.
	Service string
	// OverTime forces a time series even for a sweep.
	OverTime bool
}

// WriteChart draws the result with gonum.org/v1/plot and writes it as SVG
// or PNG.
func (r *Result) WriteChart(w io.Writer, o ChartOptions) error {
	format := o.Format
	if format == "" {
		format = "svg"
	}
	if format != "svg" && format != "png" {
		return fmt.Errorf("sim: chart format %q: want svg or png", format)
	}
	metric := o.Metric
	if metric == "" {
		metric = ChartAttempts
	}
	var p *plot.Plot
	var err error
	if !o.OverTime && r.numericSweep() && sweepMetric(metric) {
		p, err = r.sweepChart(metric)
	} else {
		p, err = r.timeChart(metric, o.Service)
	}
	if err != nil {
		return err
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(9*vg.Inch, 5*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

func sweepMetric(m string) bool {
	switch m {
	case ChartAttempts, ChartPerCall, ChartPeak, ChartP99, ChartMax, ChartGoodput, ChartFailed:
		return true
	}
	return false
}

// numericSweep reports whether the runs sweep at least three numbers.
func (r *Result) numericSweep() bool {
	if r.SweepPath == "" {
		return false
	}
	seen := map[string]bool{}
	for _, run := range r.Runs {
		if _, err := strconv.ParseFloat(run.SweepValue, 64); err != nil {
			return false
		}
		seen[run.SweepValue] = true
	}
	return len(seen) >= 3
}

func (r *Result) sweepChart(metric string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = r.Scenario + ": " + metricLabel(metric, r.Target) + " against " + r.SweepPath
	p.X.Label.Text = r.SweepPath
	p.Y.Label.Text = metricLabel(metric, r.Target)
	var order []string
	lines := map[string]plotter.XYs{}
	for _, run := range r.Runs {
		x, _ := strconv.ParseFloat(run.SweepValue, 64)
		if _, ok := lines[run.Policy]; !ok {
			order = append(order, run.Policy)
		}
		lines[run.Policy] = append(lines[run.Policy], plotter.XY{X: x, Y: sweepValue(&run, metric)})
	}
	for i, name := range order {
		l, pts, err := plotter.NewLinePoints(lines[name])
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(name, l, pts)
	}
	return p, nil
}

func sweepValue(run *RunResult, metric string) float64 {
	switch metric {
	case ChartPerCall:
		if run.Calls == 0 {
			return 0
		}
		return float64(run.Attempts) / float64(run.Calls)
	case ChartPeak:
		return float64(run.Peak)
	case ChartP99:
		return run.Latency.P99.Seconds()
	case ChartMax:
		return run.Latency.Max.Seconds()
	case ChartGoodput:
		return run.Goodput
	case ChartFailed:
		return float64(run.Failed)
	}
	return float64(run.Attempts)
}

func metricLabel(metric, target string) string {
	switch metric {
	case ChartAttempts:
		return "attempts at " + target
	case ChartThrottled:
		return "429s per second at " + target
	case ChartSucceeded:
		return "successes per second at " + target
	case ChartQueue:
		return "queue depth at " + target
	case ChartBusy:
		return "busy workers at " + target
	case ChartPerCall:
		return "attempts at " + target + " per call"
	case ChartPeak:
		return "peak attempts per window at " + target
	case ChartP99:
		return "p99 latency (s)"
	case ChartMax:
		return "slowest call (s)"
	case ChartGoodput:
		return "goodput (calls/s)"
	case ChartFailed:
		return "failed calls"
	}
	return metric
}

func (r *Result) timeChart(metric, service string) (*plot.Plot, error) {
	switch metric {
	case ChartAttempts, ChartThrottled, ChartSucceeded, ChartQueue, ChartBusy:
	default:
		return nil, fmt.Errorf("sim: chart metric %q is not a time series (want attempts, throttled, succeeded, queue or busy)", metric)
	}
	if service == "" {
		service = r.Target
	}
	p := plot.New()
	label := metricLabel(metric, service)
	if metric == ChartAttempts {
		label = "attempts per second at " + service
	}
	p.Title.Text = r.Scenario + ": " + label
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = label
	found := false
	for i, run := range r.Runs {
		var s *ServiceResult
		for j := range run.Services {
			if run.Services[j].Name == service {
				s = &run.Services[j]
			}
		}
		if s == nil {
			continue
		}
		found = true
		pts := make(plotter.XYs, 0, len(s.Series))
		for _, smp := range s.Series {
			var y float64
			per := smp.Dt.Seconds()
			switch metric {
			case ChartAttempts:
				y = float64(smp.Arrivals) / per
			case ChartThrottled:
				y = float64(smp.Throttled) / per
			case ChartSucceeded:
				y = float64(smp.Succeeded) / per
			case ChartQueue:
				y = float64(smp.Queue)
			case ChartBusy:
				y = float64(smp.Busy)
			}
			pts = append(pts, plotter.XY{X: smp.T.Seconds(), Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		p.Add(l)
		name := run.Policy
		if run.SweepValue != "" {
			name += " (" + r.SweepPath + " = " + run.SweepValue + ")"
		}
		p.Legend.Add(name, l)
	}
	if !found {
		return nil, fmt.Errorf("sim: no service named %q to chart", service)
	}
	return p, nil
}
