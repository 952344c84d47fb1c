// Package simchart draws the simulator's results as charts for recoil sim
// -o: one line per policy, over time (one panel per sweep value) or
// against a numeric sweep, through package chart. It is the command's
// own: package sim keeps the data (sim.Result), and has no plotting
// dependency.
package simchart

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
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

// Figure sizes.
const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 5 * vg.Inch
	rowHeight   = 2.6 * vg.Inch // each further row of panels
)

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
	for i, name := range order {
		l, pts, err := plotter.NewLinePoints(lines[name])
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = chart.Color(i), chart.Color(i)
		l.Width = vg.Points(chart.LineWidth)
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(3)
		p.Add(l, pts)
		fig.Legend = append(fig.Legend, chart.Entry{Label: policyName(name), Thumbs: []plot.Thumbnailer{l, pts}})
	}
	p.X.Min, p.X.Max = chart.Extend(lo, hi)
	p.Y.Min, p.Y.Max = chart.Extend(0, top)
	return fig, nil
}

// policyName is the legend's name for a run's policy.
func policyName(name string) string {
	if name == "" {
		return "the clients' own policies"
	}
	return name
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

// timeChart draws metric over time at service: one panel per sweep value,
// one line per policy, each outage shaded.
func timeChart(r *sim.Result, metric, service string) (*chart.Figure, error) {
	switch metric {
	case Attempts, Throttled, Succeeded, Queue, Busy:
	default:
		return nil, fmt.Errorf("simchart: metric %q is not a time series (want attempts, throttled, succeeded, queue or busy)", metric)
	}
	if service == "" {
		service = r.Target
	}
	values, end, err := panelsOf(r, service)
	if err != nil {
		return nil, err
	}
	t := &timeLines{r: r, metric: metric, service: service, bin: binWidth(end, r.Window), unit: time.Second}
	unitName := "s"
	if end > 5*time.Minute {
		t.unit, unitName = time.Minute, "min"
	}
	noun, yTitle := timeMetricTitle(r, metric, service, t.bin)
	t.fig = &chart.Figure{Title: r.Scenario + ": " + noun, Width: chartWidth, Height: chartHeight, Columns: 3}
	if rows := (len(values) + 2) / 3; rows > 1 {
		t.fig.Height += vg.Length(rows-1) * rowHeight
	}
	ax := sweepAxis(r)
	bands := outageBands(&r.Runs[0], t.unit)
	tops := make([]float64, len(values))
	for k, v := range values {
		title := ""
		if r.SweepPath != "" {
			title = ax.noun + ": " + ax.value(v)
		}
		yt := ""
		if k%3 == 0 {
			yt = yTitle // the leftmost panel of a row names the axis
		}
		p := chart.NewPanel(title, "time ("+unitName+")", yt)
		t.fig.Panels = append(t.fig.Panels, p)
		for _, b := range bands {
			p.Add(b.Band)
		}
		if tops[k], err = t.addLines(p, v); err != nil {
			return nil, err
		}
	}
	for _, b := range bands {
		t.fig.Legend = append(t.fig.Legend, chart.Entry{Label: b.legend(t.unit, unitName), Thumbs: []plot.Thumbnailer{b.Band}})
	}
	scalePanels(t.fig.Panels, tops, float64(end)/float64(t.unit))
	return t.fig, nil
}

// panelsOf returns the sweep values of r's runs, one panel each, and how
// long the longest series at service lasts.
func panelsOf(r *sim.Result, service string) (values []string, end time.Duration, err error) {
	found := false
	for i := range r.Runs {
		run := &r.Runs[i]
		if !slices.Contains(values, run.SweepValue) {
			values = append(values, run.SweepValue)
		}
		if s := serviceNamed(run, service); s != nil {
			found = true
			if n := len(s.Series); n > 0 {
				end = max(end, s.Series[n-1].T)
			}
		}
	}
	if !found {
		return nil, 0, fmt.Errorf("simchart: no service named %q to chart", service)
	}
	return values, end, nil
}

// timeLines draws a time chart's lines: a colour and a legend entry per
// policy, in the order the policies first appear.
type timeLines struct {
	r               *sim.Result
	metric, service string
	bin, unit       time.Duration
	fig             *chart.Figure
	policies        []string
}

// addLines draws on p the series of every run of sweep value v, and
// returns the highest step drawn.
func (t *timeLines) addLines(p *plot.Plot, v string) (top float64, err error) {
	for i := range t.r.Runs {
		run := &t.r.Runs[i]
		s := serviceNamed(run, t.service)
		if run.SweepValue != v || s == nil || len(s.Series) == 0 {
			continue
		}
		j := slices.Index(t.policies, run.Policy)
		if j < 0 {
			j = len(t.policies)
			t.policies = append(t.policies, run.Policy)
		}
		bins := binSeries(s.Series, t.metric, t.bin, t.r.Window, t.unit)
		for _, b := range bins {
			top = max(top, b.Y)
		}
		if counted(t.metric) && run.Unfinished == 0 {
			// Every call finished: nothing arrived after the run's
			// last step, and the line says so by returning to zero.
			to := bins[len(bins)-1].To
			bins = append(bins, chart.Bin{From: to, To: to})
		}
		l, err := chart.StepLine(bins, chart.Color(j), false)
		if err != nil {
			return 0, err
		}
		p.Add(l)
		if len(t.fig.Legend) == j {
			t.fig.Legend = append(t.fig.Legend, chart.Entry{Label: policyName(run.Policy), Thumbs: []plot.Thumbnailer{l}})
		}
	}
	return top, nil
}

// scalePanels sets the panels' axes: time from 0 to end, and from 0 to
// each panel's top. Panels share a scale unless one would flatten
// another: a shared scale compares them at a glance, but not when their
// largest values are more than four times apart.
func scalePanels(panels []*plot.Plot, tops []float64, end float64) {
	shared := slices.Max(tops) <= 4*slices.Min(tops)
	for k, p := range panels {
		p.X.Min, p.X.Max = chart.Extend(0, end)
		top := tops[k]
		if shared {
			top = slices.Max(tops)
		}
		p.Y.Min, p.Y.Max = 0, chart.Top(top)
	}
}

func serviceNamed(run *sim.RunResult, name string) *sim.ServiceResult {
	for j := range run.Services {
		if run.Services[j].Name == name {
			return &run.Services[j]
		}
	}
	return nil
}

// timeMetricTitle returns what a time chart's metric is called in its
// title and on its axis.
func timeMetricTitle(r *sim.Result, metric, service string, bin time.Duration) (noun, axis string) {
	per := " per " + chart.Duration(r.Window) + " window"
	mean := ""
	if bin > r.Window {
		mean = ", " + chart.Duration(bin) + " means"
	}
	switch metric {
	case Throttled:
		return "429s at " + service + per, "429s" + per + mean
	case Succeeded:
		return "successes at " + service + per, "successes" + per + mean
	case Queue:
		return "requests queued at " + service, "requests queued" + mean
	case Busy:
		return "busy workers at " + service, "busy workers" + mean
	}
	return "attempts at " + service + per, "attempts" + per + mean
}

// maxSteps is the most steps a time chart's line takes.
const maxSteps = 100

// binWidth is how long a chart's step is: the window, or a round multiple
// of it that keeps a long run to at most maxSteps steps, each the mean of
// the windows in it, so that a ten-minute run reads as a trend rather than
// three thousand spikes.
func binWidth(end, window time.Duration) time.Duration {
	for k := time.Duration(1); ; k *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if end <= maxSteps*m*k*window {
				return m * k * window
			}
		}
	}
}

// binSeries turns samples into steps of width bin: a count per window is
// the count in the step scaled to one window; a level is the mean of the
// levels sampled in the step. Times are in units of unit.
func binSeries(series []sim.Sample, metric string, bin, window, unit time.Duration) []chart.Bin {
	var out []chart.Bin
	var sum float64
	var dt time.Duration
	var n int
	cur := time.Duration(-1)
	flush := func() {
		if n == 0 {
			return
		}
		y := sum / float64(n)
		if counted(metric) {
			y = sum * float64(window) / float64(dt)
		}
		from := cur * bin
		out = append(out, chart.Bin{From: float64(from) / float64(unit), To: float64(from+bin) / float64(unit), Y: y})
	}
	for _, s := range series {
		k := (s.T - s.Dt) / bin // the step the sample's interval begins in
		if k != cur {
			flush()
			cur, sum, dt, n = k, 0, 0, 0
		}
		sum += sampleValue(s, metric)
		dt += s.Dt
		n++
	}
	flush()
	if len(out) > 0 { // the last step ends with the run, not at a round time
		last := &out[len(out)-1]
		last.To = min(last.To, float64(series[len(series)-1].T)/float64(unit))
	}
	return out
}

func counted(metric string) bool {
	return metric == Attempts || metric == Throttled || metric == Succeeded
}

func sampleValue(s sim.Sample, metric string) float64 {
	switch metric {
	case Throttled:
		return float64(s.Throttled)
	case Succeeded:
		return float64(s.Succeeded)
	case Queue:
		return float64(s.Queue)
	case Busy:
		return float64(s.Busy)
	}
	return float64(s.Arrivals)
}

// band is an outage as a chart shades it.
type band struct {
	chart.Band
	start, end time.Duration
}

// legend says what the band marks and when, in the chart's unit of time.
func (b band) legend(unit time.Duration, unitName string) string {
	at := chart.Duration
	if unit >= time.Minute {
		at = func(d time.Duration) string {
			return strconv.FormatFloat(float64(d)/float64(unit), 'f', -1, 64) + " " + unitName
		}
	}
	if b.start == 0 {
		return b.Label + ", the first " + at(b.end)
	}
	return b.Label + ", from " + at(b.start) + " to " + at(b.end)
}

// outageBands returns the run's outages, at any service, as shaded bands:
// the planned span, not a later recovery under load.
func outageBands(run *sim.RunResult, unit time.Duration) []band {
	var out []band
	for _, s := range run.Services {
		for _, o := range s.Outages {
			// "outage", not "down": an outage may fail only a share of
			// the attempts, which the result does not record.
			out = append(out, band{
				Band:  chart.Band{From: float64(o.Start) / float64(unit), To: float64(o.End) / float64(unit), Label: "outage at " + s.Name},
				start: o.Start, end: o.End,
			})
		}
	}
	return out
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

// fieldWords are the numeric fields a sweep may vary, in words, and
// whether the value is a fraction drawn as a percentage.
var fieldWords = map[string]struct {
	words    string
	fraction bool
}{
	"callers":       {"callers", false},
	"calls":         {"calls per caller", false},
	"rate":          {"arrivals per second", false},
	"workers":       {"workers", false},
	"queue":         {"queue limit", false},
	"failure":       {"failure rate", true},
	"allowance":     {"allowance per second", false},
	"recover_below": {"recovery threshold per second", false},
	"attempts":      {"attempts allowed per call", false},
	"hop":           {"retries per call tree", false},
	"limit":         {"concurrency limit", false},
	"tokens":        {"budget tokens", false},
	"ratio":         {"budget ratio", false},
	"percent":       {"retry budget (% of requests)", false},
	"multiplier":    {"backoff multiplier", false},
	"jitter":        {"jitter", false},
	"failures":      {"failures that open the breaker", false},
	"failure_rate":  {"failure rate that opens the breaker", true},
	"min_requests":  {"requests before the breaker judges", false},
	"capacity":      {"quota capacity", false},
	"retry_cost":    {"quota cost of a retry", false},
	"timeout_cost":  {"quota cost of a timeout", false},
	"throttle_cost": {"quota cost of a 429", false},
	"min_per_sec":   {"retries per second always allowed", false},
	"k":             {"throttling factor K", false},
}

// sweepAxis says in words what the result's sweep varies: never the path
// itself ("clients[writers].callers"), but "contending clients".
func sweepAxis(r *sim.Result) axis {
	contention := false // the target is a record that clients contend for
	for i := range r.Runs {
		if s := serviceNamed(&r.Runs[i], r.Target); s != nil && s.Writes > 0 {
			contention = true
		}
	}
	return describeSweep(r.SweepPath, contention)
}

// describeSweep turns a sweep path into words. contention says the swept
// clients contend for one record.
func describeSweep(path string, contention bool) axis {
	var keys []string
	var kind, owner string
	for i, part := range strings.Split(path, ".") {
		key, name, _ := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		if i == 0 && name != "" {
			kind, owner = key, name
			continue
		}
		keys = append(keys, key)
	}
	a := axis{scale: 1}
	last := ""
	if len(keys) > 0 {
		last = keys[len(keys)-1]
	}
	words := spaced(strings.Join(keys, " "))
	if f, ok := fieldWords[last]; ok {
		words = f.words
		if len(keys) > 1 { // a field of a nested mapping: "backoff base"
			if parent := strings.TrimSuffix(spaced(keys[len(keys)-2]), "s"); !strings.Contains(words, parent) {
				words = parent + " " + words
			}
		}
		if f.fraction {
			a.scale, a.unit = 100, "%"
		}
	}
	if _, err := strconv.Atoi(owner); err == nil { // an index, not a name
		owner = strings.TrimSuffix(kind, "s") + " " + owner
	}
	switch {
	case kind == "clients" && last == "callers" && contention:
		words = "contending clients"
	case kind == "services" && owner != "":
		words += " at " + owner
	case (kind == "clients" || kind == "policies") && owner != "" && owner != last:
		words += " (" + owner + ")"
	}
	if words == "" {
		words = "swept value"
	}
	a.noun, a.title = words, words
	if a.unit != "" {
		a.title += " (" + a.unit + ")"
	}
	return a
}

func spaced(key string) string { return strings.ReplaceAll(key, "_", " ") }
