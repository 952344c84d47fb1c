package demo

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/load"
)

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
