package demo

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
	"github.com/recoil-go/recoil/tools/load"
)

// WriteText writes the report as a table, each number of callers' rows
// measured and then predicted, and the ratios that compare the policies. It
// states what was counted; it does not grade it. A Live writes the same
// text a row at a time, as the rows are measured.
func (r *Report) WriteText(w io.Writer) error {
	l := NewLive(w, r.Outage, r.Window)
	l.Head()
	for _, n := range r.callers() {
		var rows []Row
		for _, row := range r.Rows {
			if row.Callers == n {
				rows = append(rows, row)
				l.Measured(row)
			}
		}
		l.Simulated(rows)
	}
	return l.Tail(r)
}

// Live writes a demo's table as it runs: the heading, each row's measured
// line as soon as the row is measured, the simulated lines of a number of
// callers once they are predicted, then the comparisons and notes. Its
// columns have fixed widths, since later rows are not known.
type Live struct {
	w      io.Writer
	outage time.Duration
	window time.Duration
	err    error
}

// NewLive returns a Live that writes to w the demo of an outage this long,
// its peak counted per window (zero: 200 ms).
func NewLive(w io.Writer, outage, window time.Duration) *Live {
	if window == 0 {
		window = 200 * time.Millisecond
	}
	return &Live{w: w, outage: outage, window: window}
}

// liveWidths are the widths of the table's columns but the last.
var liveWidths = []int{7, 11, 9, 4, 18, 16, 22}

func (l *Live) line(cells ...string) {
	if l.err != nil {
		return
	}
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i < len(liveWidths) && i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", max(liveWidths[i]-utf8.RuneCountInString(c), 0)+2))
		}
	}
	_, l.err = fmt.Fprintln(l.w, strings.TrimRight(b.String(), " "))
}

// Head writes what the table counts, and its column names.
func (l *Live) Head() {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.w, "recoil demo: a payment-gateway outage on real loopback HTTP — callers against a gateway that is down for %v,\n"+
			"counted by the gateway; each caller repeats its request until it is accepted. Each figure is the median over\n"+
			"the runs, with the least and the most in brackets. The simulator's lines predict the same runs (the same seeds,\n"+
			"its callers drawing the same random waits) once every policy has run at that number of callers.\n\n", l.outage)
	}
	l.line("callers", "policy", "", "runs", "attempts", "peak/"+fmtDur(l.window), "all accepted at", "begun again")
}

// Measured writes a row's measured line.
func (l *Live) Measured(row Row) {
	l.figures(strconv.Itoa(row.Callers), row.Policy, "measured", row.Runs, row.Measured)
}

// Simulated writes the simulated lines of the rows of one number of callers.
func (l *Live) Simulated(rows []Row) {
	for _, row := range rows {
		l.figures(strconv.Itoa(row.Callers), row.Policy, "simulated", len(row.Simulated.Attempts.Values), row.Simulated)
	}
}

func (l *Live) figures(callers, policy, what string, runs int, f Figures) {
	at := f.AllOKAt.String()
	if !f.Everyone {
		at += " (not all accepted)"
	}
	l.line(callers, policy, what, strconv.Itoa(runs), f.Attempts.String(), f.Peak.String(), at, f.Resubmitted.String())
}

// Tail writes, below the table, how each policy compares with retrying
// immediately, the notes on figures the simulator did not predict, and
// what "begun again" counts; and returns the first error writing met.
func (l *Live) Tail(r *Report) error {
	if l.err != nil {
		return l.err
	}
	w := l.w
	fmt.Fprintln(w)
	for _, n := range r.callers() {
		base, ok := r.row(n, load.PresetImmediate)
		if !ok {
			continue
		}
		for _, row := range r.Rows {
			if row.Callers != n || row.Policy == load.PresetImmediate || row.Measured.Attempts.Median == 0 || row.Measured.Peak.Median == 0 {
				continue
			}
			fmt.Fprintf(w, "%d callers, %s against immediate: attempts ÷%.1f, peak ÷%.1f (simulated: ÷%.1f, ÷%.1f)\n", n, row.Policy,
				ratio(base.Measured.Attempts.Median, row.Measured.Attempts.Median), ratio(base.Measured.Peak.Median, row.Measured.Peak.Median),
				ratio(base.Simulated.Attempts.Median, row.Simulated.Attempts.Median), ratio(base.Simulated.Peak.Median, row.Simulated.Peak.Median))
		}
	}
	if notes := r.bandNotes(); len(notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, textfmt.Wrap("Where a measured figure is off its prediction: the simulator models this machine's speed as measured "+
			"around the rows, and a busy machine's speed changes while they run, which moves the peaks most.", 116, ""))
		for _, n := range notes {
			fmt.Fprintln(w, textfmt.Wrap(n, 116, "  "))
		}
	}
	fmt.Fprintln(w, "\n\"begun again\" counts logical requests a caller began again after its retry loop gave up; most were refused")
	_, err := fmt.Fprintln(w, "by the open breaker before any attempt was sent, so the gateway never saw them.")
	return err
}

// agreement is how close a measured median and its prediction are said
// to agree: within 15 %, or one count (a peak of 5 against 6 is one attempt
// across a window's edge).
const agreement = 0.15

// agrees reports whether got is within agreement of want, or one of it.
func agrees(got, want int64) bool {
	d := float64(got - want)
	tol := max(agreement*float64(want), 1)
	return d <= tol && -d <= tol
}

// bandNotes explains each figure whose measured median and calibrated
// prediction do not agree, with what the simulator predicts on a machine
// idler or busier than calibrated (Row.Band).
func (r *Report) bandNotes() []string {
	var notes []string
	count := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, row := range r.Rows {
		m, s, b := row.Measured, row.Simulated, row.Band
		for _, f := range []struct {
			what              string
			got, want, lo, hi int64
			show              func(int64) string
		}{
			{"attempts", m.Attempts.Median, s.Attempts.Median, b.Attempts[0], b.Attempts[1], count},
			{"peak", m.Peak.Median, s.Peak.Median, b.Peak[0], b.Peak[1], count},
			{"all accepted at", int64(m.AllOKAt.Median), int64(s.AllOKAt.Median), int64(b.AllOKAt[0]), int64(b.AllOKAt[1]),
				func(v int64) string { return textfmt.Duration(time.Duration(v)) }},
		} {
			if f.want == 0 || f.got == 0 || agrees(f.got, f.want) {
				// Zero is no figure: no attempts counted, or not everyone accepted.
				continue
			}
			head := fmt.Sprintf("%d callers, %s: %s %s measured, %s simulated.", row.Callers, row.Policy, f.what, f.show(f.got), f.show(f.want))
			if f.lo == f.hi {
				// No machine simulated moves it: the runs met another.
				notes = append(notes, fmt.Sprintf("%s Simulating this machine anywhere from idle to twice as slow as measured (%s) gives the same: "+
					"the machine's pace changed while the runs ran.", head, paceText(row.Machine)))
				continue
			}
			notes = append(notes, fmt.Sprintf("%s How busy the machine is moves it: simulating it anywhere from idle to twice as slow as measured (%s) gives %s to %s.",
				head, paceText(row.Machine), f.show(f.lo), f.show(f.hi)))
		}
	}
	return notes
}

// paceText says at which paces the machines were simulated.
func paceText(m Machine) string {
	if a := m.PerAttemptAfter; a > 0 && a != m.PerAttempt {
		return fmt.Sprintf("it took %s an attempt before the rows, %s after", textfmt.Duration(m.PerAttempt), textfmt.Duration(a))
	}
	return fmt.Sprintf("it took %s an attempt before the rows", textfmt.Duration(m.PerAttempt))
}

// PeakFactor is immediate's peak divided by policy's at n callers.
func (r *Report) PeakFactor(n int, policy string) float64 {
	a, ok1 := r.row(n, load.PresetImmediate)
	b, ok2 := r.row(n, policy)
	if !ok1 || !ok2 {
		return 0
	}
	return ratio(a.Measured.Peak.Median, b.Measured.Peak.Median)
}

func (r *Report) row(n int, policy string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Callers == n && row.Policy == policy {
			return row, true
		}
	}
	return Row{}, false
}

func (r *Report) callers() []int {
	var ns []int
	for _, row := range r.Rows {
		if !slices.Contains(ns, row.Callers) {
			ns = append(ns, row.Callers)
		}
	}
	return ns
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func fmtDur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return textfmt.Duration(d)
}
