package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/load"
)

// limitChart draws an adaptive limiter's limit over a run, the attempts it
// held in flight, and the dependency's knee when it is known (knee > 0).
func limitChart(res *load.Result, knee int) *chart.Figure {
	p := chart.NewPanel("", "time (s)", "attempts in flight")
	var limitBins, useBins []chart.Bin
	top := float64(knee)
	for i, s := range res.Limits {
		to := res.Elapsed.Seconds()
		if i+1 < len(res.Limits) {
			to = res.Limits[i+1].At.Seconds()
		}
		from := s.At.Seconds()
		limitBins = append(limitBins, chart.Bin{From: from, To: to, Y: float64(s.Limit)})
		useBins = append(useBins, chart.Bin{From: from, To: to, Y: float64(s.InUse)})
		top = max(top, float64(s.Limit), float64(s.InUse))
	}
	legend := []chart.Entry{}
	if l, err := chart.StepLine(limitBins, chart.Color(1), false); err == nil {
		p.Add(l)
		legend = append(legend, chart.Entry{Label: "the limit", Thumbs: []plot.Thumbnailer{l}})
	}
	if l, err := chart.StepLine(useBins, chart.Color(2), true); err == nil {
		p.Add(l)
		label := "attempts in flight (slots held)"
		on := 0
		for i := range useBins {
			if useBins[i].Y == limitBins[i].Y {
				on++
			}
		}
		if 2*on >= len(useBins) { // drawn dashed over the limit, which shows through
			label = "attempts in flight (slots held; dashed: on the limit while every slot is held)"
		}
		legend = append(legend, chart.Entry{Label: label, Thumbs: []plot.Thumbnailer{l}})
	}
	if knee > 0 {
		k, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(knee)}, {X: res.Elapsed.Seconds(), Y: float64(knee)}})
		if err == nil {
			k.Color = color.Gray{Y: 0x70}
			k.Width = vg.Points(chart.LineWidth)
			k.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
			p.Add(k)
			legend = append(legend, chart.Entry{Label: fmt.Sprintf("the dependency's knee (%d)", knee), Thumbs: []plot.Thumbnailer{k}})
		}
	}
	p.X.Min, p.X.Max = 0, res.Elapsed.Seconds()
	p.Y.Min, p.Y.Max = 0, chart.Top(top)
	return &chart.Figure{
		Title:  fmt.Sprintf("recoil load: %s — %s, adaptive limit %s", res.Policy, res.Load(), res.LimitSummary()),
		Panels: []*plot.Plot{p},
		Width:  720,
		Height: 380,
		Legend: legend,
	}
}
