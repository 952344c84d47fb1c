// Package chart lays out recoil's charts so that a reader can put one on a
// slide: a title, one or more panels, and one legend below the panels,
// where it cannot cover data; ticks on round numbers, whole numbers printed
// as whole numbers; sans-serif text, which the SVG names together with the
// fonts a renderer falls back to. The simulator's charts (package simchart)
// and the demo's (package demo) are drawn through it; all three are the
// recoil command's own.
//
// Panels are gonum.org/v1/plot plots made with NewPanel; a Figure places
// them and draws its legend.
package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FontStack is the font-family every text element of an SVG chart names:
// the face its text is measured in, the two faces with the same metrics
// that most systems have, and the generic family as the last resort.
const FontStack = "'Liberation Sans', Arial, Helvetica, sans-serif"

// face is the font the text is measured and, in PNGs, drawn in; gonum
// embeds it. Arial and Helvetica share its metrics.
var face = font.Font{Typeface: "Liberation", Variant: "Sans"}

// svgFamily is how gonum's SVG writer names face.
const svgFamily = "font-family:Liberation Sans;"

// Font sizes, in points.
const (
	titleSize = 13
	labelSize = 11
	tickSize  = 10
	noteSize  = 9
)

func style(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(face, size),
		Handler: plot.DefaultTextHandler,
	}
}

// palette holds line colours that stay apart on a projector and for
// colour-blind readers (Okabe and Ito, "Color Universal Design", 2008),
// yellow left out: it vanishes on white.
var palette = []color.Color{
	color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	color.Black,
}

// Color returns the i-th line colour; colours repeat after seven.
func Color(i int) color.Color { return palette[i%len(palette)] }

// LineWidth is the width of a data line.
const LineWidth = 1.5

// Dashes is the dash pattern that sets a second line of the same colour
// apart (a prediction beside a measurement).
func Dashes() []vg.Length { return []vg.Length{vg.Points(5), vg.Points(3)} }

// NewPanel returns a plot styled for a Figure: sans-serif text, round
// ticks on both axes, and a light grid. title may be empty.
func NewPanel(title, xTitle, yTitle string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle = style(labelSize)
	p.Title.TextStyle.XAlign = draw.XCenter
	p.Title.TextStyle.YAlign = draw.YTop
	p.Title.Padding = vg.Points(4)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = style(labelSize)
		a.Label.TextStyle.XAlign = draw.XCenter
		a.Label.TextStyle.YAlign = draw.YBottom // the y axis turns it
		a.Tick.Label = style(tickSize)
		a.Tick.Marker = Ticks{}
	}
	p.X.Tick.Label.XAlign = draw.XCenter
	p.X.Tick.Label.YAlign = draw.YTop
	p.Y.Tick.Label.XAlign = draw.XRight
	p.Y.Tick.Label.YAlign = draw.YCenter
	p.X.Label.Text, p.Y.Label.Text = xTitle, yTitle
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xE4}
	g.Horizontal.Color = color.Gray{Y: 0xE4}
	p.Add(g)
	return p
}

// Entry is one line of a legend: a label and the thumbnails drawn beside
// it (a line, its points, a shaded band).
type Entry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Figure is a chart: a title, panels in a grid, and a legend for them all
// below the panels. Its zero value draws nothing; set Width and Height.
type Figure struct {
	Title  string
	Panels []*plot.Plot
	// Columns is the number of panels in a row; zero puts them all in one.
	Columns int
	Legend  []Entry
	// LegendColumns is the number of legend entries in a row; zero fits as
	// many as the width allows.
	LegendColumns int
	// Width is the figure's width; Height that of its title and panels.
	// The legend's rows add to the height, so that however many entries
	// there are, they never take room from the data.
	Width, Height vg.Length
}

// Layout is where a Figure puts things, in points from its bottom-left
// corner.
type Layout struct {
	Size   vg.Point // the whole figure, legend included
	Title  vg.Rectangle
	Panels []vg.Rectangle // each panel, its axes included
	Data   []vg.Rectangle // each panel's data area, inside its axes
	Legend vg.Rectangle
	// Entries are the bottom-left corners of the legend's entries, each
	// Column wide.
	Entries []vg.Point
	Column  vg.Length
}

// Spacing, in points.
const (
	margin   = 8  // around the figure
	gap      = 10 // between the title, the panels and the legend
	thumbW   = 24 // a legend thumbnail's width
	thumbGap = 5  // between a thumbnail and its label
	colGap   = 18 // between legend columns
	// slack widens every measured label by a fifth: a renderer that falls
	// back from the measured face to a wider one — DejaVu Sans, Linux's
	// usual sans-serif, runs about 15 % wider — still fits.
	slack = 1.2
)

// Layout computes where the title, panels, data areas and legend go.
func (f *Figure) Layout() Layout {
	l := Layout{Size: vg.Point{X: f.Width, Y: f.Height}}
	bottom := vg.Length(margin)
	if len(f.Legend) > 0 {
		ls := style(labelSize)
		var widest vg.Length
		for _, e := range f.Legend {
			widest = max(widest, ls.Width(e.Label))
		}
		l.Column = thumbW + thumbGap + widest*slack
		avail := f.Width - 2*margin
		cols := f.LegendColumns
		if cols <= 0 {
			cols = max(1, int((avail+colGap)/(l.Column+colGap)))
		}
		cols = min(cols, len(f.Legend))
		rows := (len(f.Legend) + cols - 1) / cols
		lineH := ls.Height("Mg") * 1.35
		width := vg.Length(cols)*l.Column + vg.Length(cols-1)*colGap
		left := margin + max(0, (avail-width)/2)
		l.Legend = vg.Rectangle{
			Min: vg.Point{X: left, Y: margin},
			Max: vg.Point{X: left + width, Y: margin + vg.Length(rows)*lineH},
		}
		for i := range f.Legend {
			r, c := i/cols, i%cols
			l.Entries = append(l.Entries, vg.Point{
				X: left + vg.Length(c)*(l.Column+colGap),
				Y: l.Legend.Max.Y - vg.Length(r+1)*lineH,
			})
		}
		bottom = l.Legend.Max.Y + gap
		l.Size.Y += bottom - margin
	}
	top := l.Size.Y - margin
	if f.Title != "" {
		ts := f.titleStyle()
		h := ts.Height(f.Title)
		l.Title = vg.Rectangle{Min: vg.Point{X: margin, Y: top - h}, Max: vg.Point{X: f.Width - margin, Y: top}}
		top -= h + gap
	}
	n := len(f.Panels)
	if n == 0 {
		return l
	}
	cols := f.Columns
	if cols <= 0 || cols > n {
		cols = n
	}
	rows := (n + cols - 1) / cols
	w := (f.Width - 2*margin - vg.Length(cols-1)*gap) / vg.Length(cols)
	h := (top - bottom - vg.Length(rows-1)*gap) / vg.Length(rows)
	for i, p := range f.Panels {
		r, c := i/cols, i%cols
		min := vg.Point{X: margin + vg.Length(c)*(w+gap), Y: top - vg.Length(r+1)*h - vg.Length(r)*gap}
		rect := vg.Rectangle{Min: min, Max: vg.Point{X: min.X + w, Y: min.Y + h}}
		l.Panels = append(l.Panels, rect)
		l.Data = append(l.Data, p.DataCanvas(draw.Canvas{Rectangle: rect}).Rectangle)
	}
	return l
}

// titleStyle is the title's font, a size smaller for each point it would
// otherwise run past the margins in a wider face (see slack), down to the
// labels' size.
func (f *Figure) titleStyle() text.Style {
	size := vg.Length(titleSize)
	for size > labelSize && style(size).Width(f.Title)*slack > f.Width-2*margin {
		size--
	}
	return style(size)
}

// Draw draws the figure on c, whose size must be Layout().Size.
func (f *Figure) Draw(c draw.Canvas) {
	l := f.Layout()
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	if f.Title != "" {
		// Left-aligned: an SVG places text by where it starts, so a wider
		// face grows rightwards; from the margin it has all the slack.
		ts := f.titleStyle()
		ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
		c.FillText(ts, vg.Point{X: l.Title.Min.X, Y: l.Title.Max.Y}, f.Title)
	}
	for i, p := range f.Panels {
		p.BackgroundColor = nil // the figure's background shows through
		p.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: l.Panels[i]})
	}
	ls := style(labelSize)
	ls.YAlign = draw.YCenter
	h := ls.Height("Mg")
	for i, e := range f.Legend {
		at := l.Entries[i]
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: at.X, Y: at.Y + h*0.15},
			Max: vg.Point{X: at.X + thumbW, Y: at.Y + h*1.05},
		}}
		for _, t := range e.Thumbs {
			t.Thumbnail(&thumb)
		}
		c.FillText(ls, vg.Point{X: at.X + thumbW + thumbGap, Y: at.Y + h*0.6}, e.Label)
	}
}

// WriteTo draws the figure and writes it in format, "svg" or "png". An
// SVG's text names FontStack.
func (f *Figure) WriteTo(w io.Writer, format string) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("chart: format %q: want svg or png", format)
	}
	size := f.Layout().Size
	c, err := draw.NewFormattedCanvas(size.X, size.Y, format)
	if err != nil {
		return err
	}
	f.Draw(draw.New(c))
	if format != "svg" {
		_, err = c.WriteTo(w)
		return err
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	_, err = w.Write(bytes.ReplaceAll(b.Bytes(), []byte(svgFamily), []byte("font-family:"+FontStack+";")))
	return err
}
