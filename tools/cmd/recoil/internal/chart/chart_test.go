package chart

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func TestTicksWholeForIntegralRanges(t *testing.T) {
	tests := []struct {
		min, max float64
		want     []string // nil: only check that every label is whole
	}{
		{0, 25, []string{"0", "5", "10", "15", "20", "25"}},
		{0, 2500, []string{"0", "500", "1,000", "1,500", "2,000", "2,500"}},
		{10, 190, []string{"50", "100", "150"}},
		{0, 200, []string{"0", "50", "100", "150", "200"}},
		{0, 3, []string{"0", "1", "2", "3"}},
		{0, 1, []string{"0", "1"}},
		{1, 2, []string{"1", "2"}},
		{0, 120000, nil},
		{0, 40, nil},
		{-5, 5, nil},
		{7, 1_000_003, nil},
	}
	for _, tt := range tests {
		ticks := Ticks{}.Ticks(tt.min, tt.max)
		var got []string
		for _, tk := range ticks {
			got = append(got, tk.Label)
			if tk.Value != math.Trunc(tk.Value) || strings.Contains(tk.Label, ".") {
				t.Errorf("Ticks(%v, %v): tick %v labelled %q, want a whole number", tt.min, tt.max, tk.Value, tk.Label)
			}
			if tk.Value < tt.min || tk.Value > tt.max {
				t.Errorf("Ticks(%v, %v): tick %v outside the range", tt.min, tt.max, tk.Value)
			}
		}
		if len(ticks) < 2 {
			t.Errorf("Ticks(%v, %v) = %q, want at least two", tt.min, tt.max, got)
		}
		if tt.want != nil && fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Ticks(%v, %v) = %q, want %q", tt.min, tt.max, got, tt.want)
		}
	}
}

func TestTicksRoundForFractionalRanges(t *testing.T) {
	tests := []struct {
		min, max float64
		want     []string
	}{
		{0, 0.4, []string{"0", "0.1", "0.2", "0.3", "0.4"}},
		{0, 4.6, []string{"0", "1", "2", "3", "4"}},
		{0.5, 0.8, []string{"0.5", "0.55", "0.6", "0.65", "0.7", "0.75", "0.8"}},
		{0, 1.5, []string{"0", "0.5", "1", "1.5"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (Ticks{}).Ticks(tt.min, tt.max) {
			got = append(got, tk.Label)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Ticks(%v, %v) = %q, want %q", tt.min, tt.max, got, tt.want)
		}
	}
}

func TestStepIsRound(t *testing.T) {
	for _, span := range []float64{0.003, 0.4, 1, 4.6, 7, 17.5, 180, 2353, 104640, 3e9} {
		s := Step(0.25, 0.25+span) // a fractional start: no whole-number floor
		m := s / math.Pow(10, math.Floor(math.Log10(s)+1e-9))
		if math.Abs(m-1) > 1e-9 && math.Abs(m-2) > 1e-9 && math.Abs(m-5) > 1e-9 {
			t.Errorf("Step over %v = %v, want 1, 2 or 5 times a power of ten", span, s)
		}
		if n := span / s; n > 7+1e-9 || n < 2.5 {
			t.Errorf("Step over %v = %v: %.1f steps, want 2.5 to 7", span, s, n)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		v    float64
		dec  int
		want string
	}{
		{0, 0, "0"},
		{999, 0, "999"},
		{1000, 0, "1,000"},
		{104640, 0, "104,640"},
		{-2500, 0, "-2,500"},
		{-0.0001, 2, "0"},
		{0.5, 2, "0.5"},
		{1234.5, 1, "1,234.5"},
	}
	for _, tt := range tests {
		if got := Format(tt.v, tt.dec); got != tt.want {
			t.Errorf("Format(%v, %d) = %q, want %q", tt.v, tt.dec, got, tt.want)
		}
	}
}

// panel returns a panel with a line from (0, 0) to (x, y).
func panel(t *testing.T, title string, x, y float64) *plot.Plot {
	t.Helper()
	p := NewPanel(title, "time (s)", "attempts per 200 ms window")
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: x, Y: y}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	return p
}

// TestLegendOutsideData lays out figures with one to seven panels and up
// to a dozen legend entries, some long: the legend never overlaps a data
// area, and everything stays inside the figure.
func TestLegendOutsideData(t *testing.T) {
	long := "exp+full jitter 60ms, measured on loopback against the gateway"
	tests := []struct {
		panels, entries, columns int
		label, title             string
	}{
		{1, 1, 0, "recoil default", ""},
		{1, 7, 2, "retry every 20 ms, simulated", ", measured and simulated, with the outage shaded"},
		{2, 4, 0, "immediate 20ms", ""},
		{1, 12, 0, long, ""},
		{3, 5, 0, "decorrelated", ", one panel per sweep value"},
		{7, 9, 0, long, ""},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%d panels, %d entries", tt.panels, tt.entries)
		t.Run(name, func(t *testing.T) {
			f := &Figure{Title: "gateway-outage: attempts at gateway per 200 ms window" + tt.title, Width: 9 * vg.Inch, Height: 5 * vg.Inch, Columns: 3, LegendColumns: tt.columns}
			if tt.panels > 3 {
				f.Height += 2 * 2.6 * vg.Inch
			}
			for i := range tt.panels {
				f.Panels = append(f.Panels, panel(t, fmt.Sprintf("callers: %d", i), 4, 2000))
			}
			for i := range tt.entries {
				f.Legend = append(f.Legend, Entry{Label: fmt.Sprintf("%s %d", tt.label, i)})
			}
			l := f.Layout()
			all := vg.Rectangle{Max: l.Size}
			if !inside(l.Legend, all) || !inside(l.Title, all) {
				t.Errorf("legend %v or title %v outside the figure %v", l.Legend, l.Title, all)
			}
			if w := f.titleStyle().Width(f.Title) * slack; w > l.Title.Size().X {
				t.Errorf("title %q is %v wide in a wider face, more than the %v it has", f.Title, w, l.Title.Size().X)
			}
			for i, e := range l.Entries {
				box := vg.Rectangle{Min: e, Max: vg.Point{X: e.X + l.Column, Y: e.Y + 1}}
				if !inside(box, l.Legend) {
					t.Errorf("entry %d at %v (width %v) outside the legend %v", i, e, l.Column, l.Legend)
				}
			}
			for i, d := range l.Data {
				if overlap(l.Legend, d) {
					t.Errorf("legend %v overlaps panel %d's data area %v", l.Legend, i, d)
				}
				if overlap(l.Title, d) {
					t.Errorf("title %v overlaps panel %d's data area %v", l.Title, i, d)
				}
				if !inside(l.Panels[i], all) || !inside(d, l.Panels[i]) {
					t.Errorf("panel %d %v (data %v) outside the figure", i, l.Panels[i], d)
				}
				if d.Size().X < 100 || d.Size().Y < 80 {
					t.Errorf("panel %d's data area is %v: too small to read", i, d.Size())
				}
			}
		})
	}
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// inside reports whether a lies within b, to a thousandth of a point.
func inside(a, b vg.Rectangle) bool {
	const e = 1e-3
	return a.Min.X >= b.Min.X-e && a.Min.Y >= b.Min.Y-e && a.Max.X <= b.Max.X+e && a.Max.Y <= b.Max.Y+e
}

// TestSVGNamesAFontStack: every text element of an SVG names the font
// stack, not a single face a renderer may lack; a PNG is a PNG.
func TestSVGNamesAFontStack(t *testing.T) {
	f := &Figure{Title: "title", Panels: []*plot.Plot{panel(t, "panel", 1, 1)}, Legend: []Entry{{Label: "line"}}, Width: 4 * vg.Inch, Height: 3 * vg.Inch}
	var svg bytes.Buffer
	if err := f.WriteTo(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	want := "font-family:" + FontStack + ";"
	if n, all := strings.Count(s, want), strings.Count(s, "font-family:"); n == 0 || n != all {
		t.Errorf("%d of %d font-family declarations name %q", n, all, FontStack)
	}
	for _, fallback := range []string{"Arial", "Helvetica", "sans-serif"} {
		if !strings.Contains(FontStack, fallback) {
			t.Errorf("FontStack %q lacks %s", FontStack, fallback)
		}
	}
	var png bytes.Buffer
	if err := f.WriteTo(&png, "png"); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Errorf("WriteTo png: %v, %.8q", err, png.Bytes())
	}
	if err := f.WriteTo(&png, "gif"); err == nil {
		t.Error("WriteTo gif: nil error")
	}
}

func TestTop(t *testing.T) {
	for _, max := range []float64{0.3, 1, 7, 17.5, 28, 2000, 8016, 104640} {
		top := Top(max)
		if max > top*(1-Headroom)+1e-9 {
			t.Errorf("Top(%v) = %v: less than %.0f%% headroom", max, top, 100*Headroom)
		}
		ticks := Ticks{}.Ticks(0, top)
		if last := ticks[len(ticks)-1].Value; last != top {
			t.Errorf("Top(%v) = %v, not on a tick (last tick %v)", max, top, last)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		d    float64 // seconds
		want string
	}{
		{0.2, "200 ms"},
		{0.7, "700 ms"},
		{1.5, "1.5 s"},
		{90, "90 s"},
		{600, "10 min"},
	}
	for _, tt := range tests {
		if got := Duration(secs(tt.d)); got != tt.want {
			t.Errorf("Duration(%vs) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
