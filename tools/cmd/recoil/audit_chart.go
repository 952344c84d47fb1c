package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/recoil-go/recoil/tools/audit"
	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
)

// fontSlack widens every text the layout measures: an SVG viewer draws
// the text in the font it has (Arial, Helvetica, DejaVu Sans), up to a
// fifth wider than the Liberation Sans the layout measures it in.
const fontSlack = 1.25

// auditChart draws the mesh as a graph: services in columns, entry points
// at the left and leaves at the right, each edge labelled with its
// attempts and what it lacks, each service with the attempts one request
// can send it. The boxes and the gaps between columns are as wide as the
// longest text that goes in them.
func auditChart(m *audit.Mesh, r *audit.Report) *chart.Figure {
	g := newGraphPlot(m, r)
	p := plot.New()
	p.HideAxes()
	p.X.Min, p.X.Max = -0.5, float64(len(g.cols))-0.5
	p.Y.Min, p.Y.Max = -float64(g.rows)/2, float64(g.rows)/2
	p.Add(g)
	pitch := g.boxW + g.gap
	title := fmt.Sprintf("recoil audit: %s — attempts one request can send each service", r.Mesh)
	return &chart.Figure{
		Title:  title,
		Panels: []*plot.Plot{p},
		Width:  max(560, pitch*vg.Length(len(g.cols))+24),
		Height: vg.Length(70 + 150*g.rows),
		Legend: []chart.Entry{
			{Label: "edge with a retry budget", Thumbs: []plot.Thumbnailer{lineThumb{chart.Color(1)}}},
			{Label: "edge with no budget", Thumbs: []plot.Thumbnailer{lineThumb{chart.Color(0)}}},
			{Label: "edge that does not retry", Thumbs: []plot.Thumbnailer{lineThumb{noRetries}}},
			{Label: "×n: attempts per call", Thumbs: nil},
		},
	}
}

// noRetries is the colour of an edge that makes one attempt.
var noRetries color.Color = color.Gray{Y: 0x90}

// edgeColor is blue for an edge whose retries a budget bounds, vermillion
// for one whose retries nothing bounds, grey for one that does not retry.
func edgeColor(e audit.EdgeReport) color.Color {
	bounded := true
	for _, r := range edgeLayers(e) {
		if r.Attempts > 1 && len(r.On) > 0 && r.Budget.Kind == "" {
			bounded = false
		}
	}
	switch {
	case e.Attempts <= 1:
		return noRetries
	case !bounded:
		return chart.Color(0)
	}
	return chart.Color(1)
}

// lineThumb is a legend swatch: a line of one colour.
type lineThumb struct{ c color.Color }

func (l lineThumb) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle{Color: l.c, Width: vg.Points(2.5)}, c.Min.X, y, c.Max.X, y)
}

// graphPlot draws the graph inside a panel whose data range is one unit
// per column and per row.
type graphPlot struct {
	m    *audit.Mesh
	r    *audit.Report
	cols [][]string
	rows int
	// reach is what one request from the entries sends each service,
	// worst case; entry marks the entry points; findings are each edge's
	// checks.
	reach    map[string]audit.Reach
	entry    map[string]bool
	findings map[string][]string
	// boxW and boxH are a service's box; gap the room between columns.
	boxW, boxH, gap vg.Length
	col             map[string]int
}

var graphFace = font.Font{Typeface: "Liberation", Variant: "Sans"}

func graphText(size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(graphFace, size), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
}

var (
	nameStyle  = graphText(11, color.Black)
	noteStyle  = graphText(9, color.Gray{Y: 0x40})
	labelStyle = graphText(13, color.Black)
)

// newGraphPlot lays the graph out: its columns, what each service is
// reached by, and the sizes its texts need.
func newGraphPlot(m *audit.Mesh, r *audit.Report) *graphPlot {
	g := &graphPlot{m: m, r: r, cols: m.Columns(), reach: map[string]audit.Reach{}, entry: map[string]bool{},
		findings: map[string][]string{}, col: map[string]int{}, boxW: 120, boxH: 46, gap: 130}
	for ci, c := range g.cols {
		g.rows = max(g.rows, len(c))
		for _, s := range c {
			g.col[s] = ci
		}
	}
	for _, er := range r.Entries {
		g.entry[er.Entry] = true
		for _, s := range er.Services {
			if cur, ok := g.reach[s.Service]; !ok || s.WorstCase > cur.WorstCase {
				g.reach[s.Service] = s
			}
		}
	}
	for _, f := range r.Findings {
		w := strings.ReplaceAll(f.Check, "-", " ")
		if strings.HasPrefix(f.Message, "the sidecar: ") {
			w = "sidecar: " + w
		}
		if !slices.Contains(g.findings[f.Edge], w) {
			g.findings[f.Edge] = append(g.findings[f.Edge], w)
		}
	}
	for _, c := range g.cols {
		for _, s := range c {
			g.boxW = max(g.boxW, nameStyle.Width(s)*fontSlack+20, noteStyle.Width(g.nodeNote(s))*fontSlack+20)
		}
	}
	for _, e := range r.Edges {
		head, lines := g.edgeText(e)
		w := labelStyle.Width(head)
		for _, l := range lines {
			w = max(w, noteStyle.Width(l))
		}
		g.gap = max(g.gap, w*fontSlack+40)
	}
	return g
}

func (g *graphPlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pos := map[string]vg.Point{}
	for ci, col := range g.cols {
		for ri, s := range col {
			y := float64(len(col)-1)/2 - float64(ri)
			pos[s] = vg.Point{X: trX(float64(ci)), Y: trY(y)}
		}
	}
	// Edges first, so the boxes sit over their ends.
	ends := g.edgeEnds(pos)
	for i := range g.r.Edges {
		g.drawEdge(c, i, pos, ends, trX)
	}
	for _, col := range g.cols {
		for _, s := range col {
			g.drawBox(c, s, pos[s])
		}
	}
}

// edgeEnds spreads each box's edges' ends down its side, in the order of
// the services at their other ends, so that edges to one box stay apart:
// {edge, 0 start / 1 end} → y offset.
func (g *graphPlot) edgeEnds(pos map[string]vg.Point) map[[2]int]vg.Length {
	outs, ins := map[string][]int{}, map[string][]int{}
	for i, e := range g.r.Edges {
		outs[e.From] = append(outs[e.From], i)
		ins[e.To] = append(ins[e.To], i)
	}
	end := map[[2]int]vg.Length{}
	spread := func(list []int, other func(i int) string, side int) {
		sort.SliceStable(list, func(a, b int) bool { return pos[other(list[a])].Y > pos[other(list[b])].Y })
		step := min(vg.Points(12), g.boxH*0.6/vg.Length(max(len(list), 1)))
		for k, i := range list {
			end[[2]int{i, side}] = (vg.Length(len(list)-1)/2 - vg.Length(k)) * step
		}
	}
	for _, l := range outs {
		spread(l, func(i int) string { return g.r.Edges[i].To }, 0)
	}
	for _, l := range ins {
		spread(l, func(i int) string { return g.r.Edges[i].From }, 1)
	}
	return end
}

// edgeRoute is the line of edge i: from its caller's box to its callee's,
// an edge that skips columns passing each one between its boxes.
func (g *graphPlot) edgeRoute(i int, pos map[string]vg.Point, ends map[[2]int]vg.Length, trX func(float64) vg.Length) []vg.Point {
	e := g.r.Edges[i]
	a, b := pos[e.From], pos[e.To]
	from := vg.Point{X: a.X + g.boxW/2, Y: a.Y + ends[[2]int{i, 0}]}
	to := vg.Point{X: b.X - g.boxW/2, Y: b.Y + ends[[2]int{i, 1}]}
	pts := []vg.Point{from}
	for ci := g.col[e.From] + 1; ci < g.col[e.To]; ci++ {
		x := trX(float64(ci))
		y := from.Y + (to.Y-from.Y)*(x-from.X)/(to.X-from.X)
		for k, s := range g.cols[ci] {
			ny := pos[s].Y
			if !(y < ny+g.boxH/2+30 && y > ny-g.boxH/2-30) {
				continue
			}
			// Into the gap beside the box: halfway to its neighbour,
			// or clear of it at the column's end.
			above, below := ny+g.boxH/2+30, ny-g.boxH/2-30
			if k > 0 {
				above = (ny + pos[g.cols[ci][k-1]].Y) / 2
			}
			if k+1 < len(g.cols[ci]) {
				below = (ny + pos[g.cols[ci][k+1]].Y) / 2
			}
			if y >= ny {
				y = above
			} else {
				y = below
			}
		}
		pts = append(pts, vg.Point{X: x - g.boxW/2 - 12, Y: y}, vg.Point{X: x + g.boxW/2 + 12, Y: y})
	}
	return append(pts, to)
}

// drawEdge draws edge i, its arrow and its label: on the stretch into the
// callee, or, for an edge that skips columns, on its first pass between
// boxes.
func (g *graphPlot) drawEdge(c draw.Canvas, i int, pos map[string]vg.Point, ends map[[2]int]vg.Length, trX func(float64) vg.Length) {
	e := g.r.Edges[i]
	pts := g.edgeRoute(i, pos, ends, trX)
	to := pts[len(pts)-1]
	lane := len(pts) > 2
	line := append(pts[:len(pts)-1:len(pts)-1], vg.Point{X: to.X - 6, Y: to.Y})
	colr := edgeColor(e)
	c.StrokeLines(draw.LineStyle{Color: colr, Width: vg.Points(2.5)}, line)
	p0 := pts[len(pts)-2]
	arrowHead(c, p0, to, colr)
	mid := vg.Point{X: (p0.X + to.X) / 2, Y: (p0.Y + to.Y) / 2}
	rise := to.Y - p0.Y
	if lane {
		mid, rise = vg.Point{X: (pts[1].X + pts[2].X) / 2, Y: pts[1].Y}, 0
	}
	head, lines := g.edgeText(e)
	edgeLabel(c, mid, rise, colr, head, lines)
}

// edgeText is an edge's label: its attempts per call and kind, then what
// a drained budget leaves, the callee's sidecar's inbound retries and each
// check it fails, one to a line.
func (g *graphPlot) edgeText(e audit.EdgeReport) (string, []string) {
	head := fmt.Sprintf("×%d  %s", e.Attempts, e.Retry.Kind)
	if e.Sidecar != nil {
		head = fmt.Sprintf("×%d  %s ×%d · sidecar ×%d", e.Attempts, e.Retry.Kind, e.Retry.Attempts, e.Sidecar.Attempts)
	}
	var lines []string
	switch {
	case e.Attempts <= 1:
		lines = append(lines, "no retries")
	case e.Retry.Budget.Kind != "":
		lines = append(lines, "budget drained: ×"+num(e.Sustained, -2))
	}
	if e.Inbound != nil {
		lines = append(lines, fmt.Sprintf("%s's sidecar ×%d on its reset", e.To, e.InboundAttempts))
	}
	return head, append(lines, g.findings[e.Name()]...)
}

// drawBox draws service s's box centred at at.
func (g *graphPlot) drawBox(c draw.Canvas, s string, at vg.Point) {
	rect := vg.Rectangle{Min: vg.Point{X: at.X - g.boxW/2, Y: at.Y - g.boxH/2}, Max: vg.Point{X: at.X + g.boxW/2, Y: at.Y + g.boxH/2}}
	fill := color.Gray{Y: 0xF2}
	if g.entry[s] {
		fill = color.Gray{Y: 0xE0}
	}
	c.SetColor(fill)
	c.Fill(rect.Path())
	c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(1)},
		[]vg.Point{rect.Min, {X: rect.Max.X, Y: rect.Min.Y}, rect.Max, {X: rect.Min.X, Y: rect.Max.Y}, rect.Min})
	c.FillText(nameStyle, vg.Point{X: at.X, Y: at.Y + 8}, s)
	c.FillText(noteStyle, vg.Point{X: at.X, Y: at.Y - 9}, g.nodeNote(s))
}

// nodeNote is the line under a service's name: the attempts one request
// can send it.
func (g *graphPlot) nodeNote(s string) string {
	rc, ok := g.reach[s]
	switch {
	case !ok && g.entry[s]:
		return "entry point"
	case !ok:
		return "not reached"
	case rc.Sustained < rc.WorstCase:
		return fmt.Sprintf("%s per request, drained %s", num(rc.WorstCase, -2), num(rc.Sustained, -2))
	}
	return fmt.Sprintf("%s attempts per request", num(rc.WorstCase, -2))
}

// edgeLabel writes an edge's multiplier and notes at mid. On a level
// stretch the multiplier goes above the line and the notes below; on a
// sloping one all of it goes on the side the line leaves free, left of
// mid and above a rising line, below a falling one.
func edgeLabel(c draw.Canvas, mid vg.Point, rise vg.Length, col color.Color, head string, lines []string) {
	label := graphText(13, col)
	sub := noteStyle
	const lineH = 12
	switch {
	case rise > 20: // rising: stack upwards, the notes nearest the line
		label.XAlign, sub.XAlign = draw.XRight, draw.XRight
		label.YAlign, sub.YAlign = draw.YBottom, draw.YBottom
		at := vg.Point{X: mid.X - 6, Y: mid.Y + 6}
		for k := len(lines) - 1; k >= 0; k-- {
			c.FillText(sub, at, lines[k])
			at.Y += lineH
		}
		c.FillText(label, at, head)
	case rise < -20: // falling: stack downwards
		label.XAlign, sub.XAlign = draw.XRight, draw.XRight
		label.YAlign, sub.YAlign = draw.YTop, draw.YTop
		at := vg.Point{X: mid.X - 6, Y: mid.Y - 6}
		c.FillText(label, at, head)
		at.Y -= 16
		for _, l := range lines {
			c.FillText(sub, at, l)
			at.Y -= lineH
		}
	default:
		label.YAlign = draw.YBottom
		c.FillText(label, vg.Point{X: mid.X, Y: mid.Y + 4}, head)
		sub.YAlign = draw.YTop
		for k, l := range lines {
			c.FillText(sub, vg.Point{X: mid.X, Y: mid.Y - 4 - vg.Length(lineH*k)}, l)
		}
	}
}

// arrowHead draws a filled triangle at to, pointing along from → to.
func arrowHead(c draw.Canvas, from, to vg.Point, col color.Color) {
	dx, dy := float64(to.X-from.X), float64(to.Y-from.Y)
	l := math.Hypot(dx, dy)
	if l == 0 {
		return
	}
	ux, uy := dx/l, dy/l
	const size, half = 10.0, 5.0
	base := vg.Point{X: to.X - vg.Length(ux*size), Y: to.Y - vg.Length(uy*size)}
	p1 := vg.Point{X: base.X - vg.Length(uy*half), Y: base.Y + vg.Length(ux*half)}
	p2 := vg.Point{X: base.X + vg.Length(uy*half), Y: base.Y - vg.Length(ux*half)}
	c.FillPolygon(col, []vg.Point{to, p1, p2})
}
