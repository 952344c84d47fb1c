package simchart

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/sim"
)

func sweepMetric(m string) bool {
	switch m {
	case Attempts, PerCall, Peak, P99, Max, Goodput, Failed:
		return true
	}
	return false
}

// numericSweep reports whether r's runs sweep at least three numbers.
func numericSweep(r *sim.Result) bool {
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

func sweepChart(r *sim.Result, metric string) (*chart.Figure, error) {
	ax := sweepAxis(r)
	noun, yTitle := sweepMetricTitle(r, metric)
	p := chart.NewPanel("", ax.title, yTitle)
	fig := &chart.Figure{
		Title:  r.Scenario + ": " + noun + " against " + ax.noun,
		Panels: []*plot.Plot{p},
		Width:  chartWidth, Height: chartHeight,
	}
	var order []string
	lines := map[string]plotter.XYs{}
	lo, hi, top := math.Inf(1), math.Inf(-1), 0.0
	for i := range r.Runs {
		run := &r.Runs[i]
		x, _ := strconv.ParseFloat(run.SweepValue, 64)
		x *= ax.scale
		if _, ok := lines[run.Policy]; !ok {
			order = append(order, run.Policy)
		}
		y := sweepValue(run, metric)
		lines[run.Policy] = append(lines[run.Policy], plotter.XY{X: x, Y: y})
		lo, hi, top = min(lo, x), max(hi, x), max(top, y)
	}
	var drawn [][]float64 // the lines drawn so far, their y values
	for i, name := range order {
		l, pts, err := plotter.NewLinePoints(lines[name])
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = chart.Color(i), chart.Color(i)
		l.Width = vg.Points(chart.LineWidth)
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(3)
		label := policyName(name)
		ys := make([]float64, len(lines[name]))
		for k, xy := range lines[name] {
			ys[k] = xy.Y
		}
		// A line on an earlier one is dashed, so the one beneath shows.
		if j, exact := coinciding(ys, drawn, top, 1, nil); j >= 0 {
			l.Dashes = chart.Dashes()
			label += coincideNote(policyName(order[j]), exact, true)
		}
		drawn = append(drawn, ys)
		p.Add(l, pts)
		fig.Legend = append(fig.Legend, chart.Entry{Label: label, Thumbs: []plot.Thumbnailer{l, pts}})
	}
	p.X.Min, p.X.Max = chart.Extend(lo, hi)
	p.Y.Min, p.Y.Max = chart.Extend(0, top)
	return fig, nil
}

func sweepValue(run *sim.RunResult, metric string) float64 {
	switch metric {
	case PerCall:
		if run.Calls == 0 {
			return 0
		}
		return float64(run.Attempts) / float64(run.Calls)
	case Peak:
		return float64(run.Peak)
	case P99:
		return run.Latency.P99.Seconds()
	case Max:
		return run.Latency.Max.Seconds()
	case Goodput:
		return run.Goodput
	case Failed:
		return float64(run.Failed)
	}
	return float64(run.Attempts)
}

// sweepMetricTitle returns what a sweep chart's metric is called in its
// title and on its axis.
func sweepMetricTitle(r *sim.Result, metric string) (noun, axis string) {
	at := " at " + r.Target
	switch metric {
	case PerCall:
		return "attempts per call", "attempts" + at + " per call"
	case Peak:
		return "the busiest " + chart.Duration(r.Window) + " window", "most attempts" + at + " in one " + chart.Duration(r.Window) + " window"
	case P99:
		return "p99 latency", "p99 latency of a call (s)"
	case Max:
		return "the slowest call", "slowest call (s)"
	case Goodput:
		return "goodput", "calls that succeeded per second"
	case Failed:
		return "failed calls", "calls that failed, in all"
	}
	return "attempts", "attempts" + at + ", in all"
}

// axis says in words what a sweep varies.
type axis struct {
	title string  // on the axis, with its unit: "failure rate at backend (%)"
	noun  string  // in a title, without it: "failure rate at backend"
	scale float64 // what a value is multiplied by to be drawn (100 for a fraction drawn as a percentage)
	unit  string  // "%" or ""
}

// value writes a sweep value as the axis counts it: "1,000", "5%".
func (a axis) value(v string) string {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	x *= a.scale
	dec := 0
	for dec < 6 && math.Abs(x*math.Pow10(dec)-math.Round(x*math.Pow10(dec))) > 1e-9 {
		dec++
	}
	return chart.Format(x, dec) + a.unit
}

// sweepAxis says in words what the result's sweep varies: never the path
// itself ("clients[writers].callers"), but "contending clients".
func sweepAxis(r *sim.Result) axis {
	a := r.SweepAxis()
	return axis{title: a.Title, noun: a.Noun, scale: a.Scale, unit: a.Unit}
}

// describeSweep turns a sweep path into words (the simulator's words, so
// a chart's axis and a table's column agree).
func describeSweep(path string, contention bool) axis {
	a := sim.DescribeSweep(path, contention)
	return axis{title: a.Title, noun: a.Noun, scale: a.Scale, unit: a.Unit}
}
