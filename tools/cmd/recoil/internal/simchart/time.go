package simchart

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/sim"
)

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
	bands := outageBands(&r.Runs[0], service, t.unit)
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
	type line struct {
		policy string
		j      int
		bins   []chart.Bin
	}
	var lines []line
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
		lines = append(lines, line{run.Policy, j, bins})
	}
	all := make([][]float64, len(lines))
	for k, ln := range lines {
		all[k] = make([]float64, len(ln.bins))
		for i, b := range ln.bins {
			all[k][i] = b.Y
		}
	}
	skip := together(all, coincideTol*top)
	var drawn [][]float64
	for k, ln := range lines {
		ys := all[k]
		// A line on an earlier one for much of the run (where the lines
		// are not all together) is dashed, so the one beneath shows.
		on, exact := coinciding(ys, drawn, top, coincideShare, skip)
		drawn = append(drawn, ys)
		l, err := chart.StepLine(ln.bins, chart.Color(ln.j), on >= 0)
		if err != nil {
			return 0, err
		}
		p.Add(l)
		if len(t.fig.Legend) == ln.j {
			label := policyName(ln.policy)
			if on >= 0 {
				close, n, _ := onLine(ys, drawn[on], coincideTol*top, skip)
				label += coincideNote(policyName(lines[on].policy), exact, close == n)
			}
			t.fig.Legend = append(t.fig.Legend, chart.Entry{Label: label, Thumbs: []plot.Thumbnailer{l}})
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

// outageBands returns the run's outages as shaded bands: the planned
// span, not a later recovery under load. A chart of a service that has
// outages of its own shades those; one of a service that has none (a
// layer above the dependency that fails) shades every service's. Bands
// that meet take shades apart.
func outageBands(run *sim.RunResult, service string, unit time.Duration) []band {
	var out []band
	own := serviceNamed(run, service)
	for _, s := range run.Services {
		if own != nil && len(own.Outages) > 0 && s.Name != service {
			continue
		}
		for _, o := range s.Outages {
			b := band{
				Band:  chart.Band{From: float64(o.Start) / float64(unit), To: float64(o.End) / float64(unit)},
				start: o.Start, end: o.End,
			}
			b.Label, b.Short = outageWords(s.Name, o.Class)
			if k := len(out); k > 0 && o.Start <= out[k-1].end {
				prev := out[k-1].Color
				if prev == nil {
					prev = chart.BandColor
				}
				b.Color = bandShades[(slices.Index(bandShades, prev)+1)%len(bandShades)]
			}
			out = append(out, b)
		}
	}
	return out
}

// bandShades are the greys of bands side by side, the first the usual.
var bandShades = []color.Color{chart.BandColor, color.Gray{Y: 0xC4}, color.Gray{Y: 0xEC}}

// outageWords says what an outage of class at service s is, in the
// legend and, shorter, inside its band ("" for the same words). "outage",
// not "down", for the classes that fail: an outage may fail only a share
// of the attempts, which the result does not record.
func outageWords(s, class string) (label, short string) {
	switch class {
	case "overloaded":
		return s + " overloaded (503, 529)", "overloaded"
	case "not-found":
		return s + " answers 404 model_not_found", "404 retired model"
	case "unauthorized":
		return s + " answers 401 invalid_api_key", "401 key refused"
	case "quota":
		return s + " answers 429 insufficient_quota", "429 quota spent"
	}
	return "outage at " + s, ""
}
