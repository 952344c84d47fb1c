package demo

import (
	"strings"
	"testing"
	"time"
)

// TestLiveWritesAsItGoes: a row's measured line is written the moment the
// row is given, before any prediction; the simulated lines follow when the
// rows of that number of callers are predicted, in the same columns.
func TestLiveWritesAsItGoes(t *testing.T) {
	var b strings.Builder
	l := NewLive(&b, 700*time.Millisecond, 0)
	l.Head()
	row := Row{Callers: 4, Policy: "immediate", Runs: 3,
		Measured:  Figures{Attempts: spreadOf([]int64{120, 128, 136}), Peak: spreadOf([]int64{36, 40, 40}), Everyone: true},
		Simulated: Figures{Attempts: spreadOf([]int64{116, 120, 130}), Peak: spreadOf([]int64{32, 36, 40}), Everyone: true}}
	l.Measured(row)
	if got := b.String(); !strings.Contains(got, "measured") || strings.Contains(got, "simulated ") {
		t.Fatalf("after Measured:\n%s\nwant the measured line and no simulated one", got)
	}
	l.Simulated([]Row{row})
	if err := l.Tail(&Report{Rows: []Row{row}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var m, s string
	for _, line := range lines {
		switch {
		case strings.Contains(line, " measured "):
			m = line
		case strings.Contains(line, " simulated "):
			s = line
		}
	}
	if m == "" || s == "" || strings.Index(m, "measured") != strings.Index(s, "simulated") {
		t.Errorf("measured and simulated lines not in one column:\n%s\n%s", m, s)
	}
}
