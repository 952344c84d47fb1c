package demo

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
	"github.com/recoil-go/recoil/tools/load"
)

// WriteText writes the report as a table, each row measured and then
// predicted, and the ratios that compare the policies. It states what was
// counted; it does not grade it.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "recoil demo: a payment-gateway outage on real loopback HTTP — callers against a gateway that is down for %v,\n", r.Outage)
	fmt.Fprintf(w, "counted by the gateway; each caller repeats its request until it is accepted. Each figure is the median over\n")
	fmt.Fprintf(w, "the runs, with the least and the most in brackets; the simulator's line predicts the same runs: the same seeds, its callers drawing the same random waits.\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "callers\tpolicy\t\truns\tattempts\tpeak/%s\tall accepted at\tbegun again\n", fmtDur(r.Window))
	for _, row := range r.Rows {
		for _, line := range []struct {
			what string
			runs int
			f    Figures
		}{{"measured", row.Runs, row.Measured}, {"simulated", len(row.Simulated.Attempts.Values), row.Simulated}} {
			callers, policy := strconv.Itoa(row.Callers), row.Policy
			if line.what == "simulated" {
				callers, policy = "", ""
			}
			at := line.f.AllOKAt.String()
			if !line.f.Everyone {
				at += " (not all accepted)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", callers, policy, line.what, line.runs,
				line.f.Attempts, line.f.Peak, at, line.f.Resubmitted)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
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
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	fmt.Fprintln(w, "\n\"begun again\" counts logical requests a caller began again after its retry loop gave up; most were refused")
	fmt.Fprintln(w, "by the open breaker before any attempt was sent, so the gateway never saw them.")
	return nil
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
			head := fmt.Sprintf("%d callers, %s: %s %s measured against %s simulated", row.Callers, row.Policy, f.what, f.show(f.got), f.show(f.want))
			if f.lo == f.hi {
				// No machine simulated moves it: the runs met another.
				notes = append(notes, fmt.Sprintf("%s; the same on every machine simulated, from idle to twice as late as calibrated %s: the machine's pace during the runs was not what it was around them",
					head, paceText(row.Machine)))
				continue
			}
			notes = append(notes, fmt.Sprintf("%s; simulated from idle to twice as late as calibrated %s: %s–%s", head, paceText(row.Machine), f.show(f.lo), f.show(f.hi)))
		}
	}
	return notes
}

// paceText says at which paces the machines were simulated.
func paceText(m Machine) string {
	if a := m.PerAttemptAfter; a > 0 && a != m.PerAttempt {
		return fmt.Sprintf("at %s and %s an attempt, the pace before the rows and after", textfmt.Duration(m.PerAttempt), textfmt.Duration(a))
	}
	return fmt.Sprintf("at %s an attempt, the pace measured before the rows", textfmt.Duration(m.PerAttempt))
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
