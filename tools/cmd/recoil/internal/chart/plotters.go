package chart

import (
	"image/color"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BandColor is the grey an outage is shaded in.
var BandColor color.Color = color.Gray{Y: 0xDD}

// Band shades the span [From, To] of the x axis across the whole height of
// the data area, and writes Label (or Short, if set) inside it at the top.
// Add it before the data, so the data is drawn over it, and leave headroom
// above the data (see Headroom) so the label crosses no line. It is also a
// legend thumbnail: a swatch of its colour.
type Band struct {
	From, To float64
	Label    string
	// Short, if set, is written inside the band in place of Label: for a
	// band too narrow for the legend's words.
	Short string
	// Color is the band's shade; nil means BandColor. Bands side by side
	// take shades apart, so each reads as one.
	Color color.Color
}

func (b Band) color() color.Color {
	if b.Color == nil {
		return BandColor
	}
	return b.Color
}

var (
	_ plot.Plotter     = Band{}
	_ plot.Thumbnailer = Band{}
)

// Plot implements plot.Plotter.
func (b Band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(trX(b.From), c.Min.X), min(trX(b.To), c.Max.X)
	if x1 <= x0 {
		return
	}
	c.FillPolygon(b.color(), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	text := b.Label
	if b.Short != "" {
		text = b.Short
	}
	if text == "" {
		return
	}
	ts := style(noteSize)
	ts.Color = color.Gray{Y: 0x40}
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
	c.FillText(ts, vg.Point{X: x0 + 3, Y: c.Max.Y - 3}, text)
}

// Thumbnail implements plot.Thumbnailer.
func (b Band) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(b.color(), []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// Headroom is the share of a data area's height that Top leaves empty
// above the data, for a band's label.
const Headroom = 0.15

// Top returns the top of a y axis that starts at zero and shows values up
// to max with Headroom to spare, rounded up to a labelled tick.
func Top(max float64) float64 {
	if !(max > 0) {
		return 1
	}
	_, hi := Extend(0, max/(1-Headroom))
	return hi
}

// Bin is a value held over [From, To): a count in a window, or its mean
// over several.
type Bin struct{ From, To, Y float64 }

// StepLine returns a line that holds each bin's value across the bin:
// counts per window drawn as counts per window, not as a slope between
// instants.
func StepLine(bins []Bin, c color.Color, dashed bool) (*plotter.Line, error) {
	pts := make(plotter.XYs, 0, len(bins)+1)
	for _, b := range bins {
		pts = append(pts, plotter.XY{X: b.From, Y: b.Y})
	}
	if n := len(bins); n > 0 {
		pts = append(pts, plotter.XY{X: bins[n-1].To, Y: bins[n-1].Y})
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.Color = c
	l.Width = vg.Points(LineWidth)
	if dashed {
		l.Dashes = Dashes()
	}
	return l, nil
}

// Duration writes d for a reader: "200 ms", "700 ms", "1.5 s", "90 s",
// "10 min".
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return trim(float64(d)/float64(time.Millisecond)) + " ms"
	case d < 2*time.Minute:
		return trim(d.Seconds()) + " s"
	case d < 2*time.Hour:
		return trim(d.Minutes()) + " min"
	}
	return trim(d.Hours()) + " h"
}

// trim prints x with up to two decimals, dropping trailing zeros.
func trim(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
