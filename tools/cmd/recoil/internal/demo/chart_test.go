package demo

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/load"
)

// report is a Report shaped like the demo's, without running it.
func report() *Report {
	r := &Report{Outage: 700 * time.Millisecond, Window: 200 * time.Millisecond}
	for _, n := range []int{4, 200} {
		for i, p := range []string{load.PresetImmediate, load.PresetFullJitter, load.PresetDefault} {
			row := Row{Callers: n, Policy: p, Measured: Figures{Everyone: true}, Simulated: Figures{Everyone: true}}
			for k := range 4 + 3*i {
				row.Series = append(row.Series, int64(10*n/(k+1)/(i+1)))
				row.SimSeries = append(row.SimSeries, int64(9*n/(k+1)/(i+1)))
			}
			r.Rows = append(r.Rows, row)
		}
	}
	return r
}

// TestChart: the demo's chart has a legend below its data, titles in
// words, the outage in the legend, and an SVG in the font stack.
func TestChart(t *testing.T) {
	r := report()
	f, err := r.figure()
	if err != nil {
		t.Fatal(err)
	}
	l := f.Layout()
	for i, d := range l.Data {
		if l.Legend.Max.Y > d.Min.Y || l.Legend.Min.Y < 0 || l.Legend.Max.X > l.Size.X {
			t.Errorf("legend %v overlaps data area %d %v or leaves the figure %v", l.Legend, i, d, l.Size)
		}
	}
	p := f.Panels[0]
	for _, s := range []string{f.Title, p.X.Label.Text, p.Y.Label.Text} {
		if regexp.MustCompile(`\[|[a-z]\.[a-z]`).MatchString(s) {
			t.Errorf("title %q reads like a field path", s)
		}
	}
	if want := "attempts per 200 ms window"; p.Y.Label.Text != want {
		t.Errorf("y axis %q, want %q", p.Y.Label.Text, want)
	}
	if got, want := len(f.Legend), 7; got != want { // three policies, measured and simulated, and the outage
		t.Errorf("%d legend entries, want %d", got, want)
	}
	if last := f.Legend[len(f.Legend)-1]; !strings.Contains(last.Label, "700 ms") {
		t.Errorf("last legend entry %q, want the outage", last.Label)
	}
	var b bytes.Buffer
	if err := r.WriteChart(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	if n, all := strings.Count(b.String(), "font-family:"+chart.FontStack), strings.Count(b.String(), "font-family:"); n == 0 || n != all {
		t.Errorf("%d of %d font-family declarations name the font stack", n, all)
	}
	if err := (&Report{}).WriteChart(&b, "svg"); err == nil {
		t.Error("WriteChart of an empty report: nil error")
	}
}
