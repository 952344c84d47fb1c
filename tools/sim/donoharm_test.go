package sim

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The policies of the do-no-harm scenarios that are recoil's defaults, and
// the budget share each states: attempts per call stay within
// 1 + share × (the share of calls answered), plus the reserve over the run.
var doNoHarmDefaults = []struct {
	name           string
	share, reserve float64
}{
	{"Default()", 0.2, 10},
	{"Interactive()", 0.2, 10},
	{"Background()", 0.1, 20},
	{"default preset", 0.2, 10},
}

const noRetries = "no retries"

// doNoHarm runs a shipped do-no-harm scenario: as shipped under
// RECOIL_LONG=1 (its figures are docs/why.md's), shorter by default with
// the same assertions.
func doNoHarm(t *testing.T, name string, short func(*Scenario)) *Result {
	t.Helper()
	if long() {
		return runShipped(t, name, 1)
	}
	s := builtin(t, name)
	short(s)
	return run(t, s, 1)
}

// TestDoNoHarm pins the contract of recoil's defaults (docs/why.md, "Do no
// harm"): against a dependency failing at random at any rate up to 50 %,
// each default answers at least as many calls as no retries (within the
// sampling noise of the failures) and sends at most what its budget
// states; against a dependency that is down, or failing from its own
// load, each sends no more than its budget's share above what no retries
// sends, and recovers when the dependency does.
func TestDoNoHarm(t *testing.T) {
	t.Parallel()
	t.Run("independent", func(t *testing.T) {
		t.Parallel()
		r := doNoHarm(t, "do-no-harm", func(s *Scenario) {
			s.Duration, s.Warmup = 50*time.Second, 10*time.Second
			s.Policies = s.Policies[:5] // the defaults and no retries
		})
		for _, run := range r.Runs {
			f, _ := strconv.ParseFloat(run.SweepValue, 64)
			none := runOf(t, r, noRetries, run.SweepValue)
			for _, d := range doNoHarmDefaults {
				if run.Policy != d.name {
					continue
				}
				answered := float64(run.Succeeded) / float64(run.Calls)
				if bound := 1 + d.share*answered + d.reserve/float64(run.Calls) + 0.005; perCallOf(run) > bound {
					t.Errorf("failure %s, %s: %.3f attempts a call, above its budget's %.3f", run.SweepValue, d.name, perCallOf(run), bound)
				}
				// The price of the budget's refusals: the answers their
				// retries would likely have had, at about the success rate.
				c := clientOf(t, run, "app")
				if refused := c.FailedBy["retry budget exhausted"]; refused > 100 {
					won := c.LikelyWon["retry budget exhausted"]
					if want := float64(refused) * (1 - f); math.Abs(won-want) > 0.15*want {
						t.Errorf("failure %s, %s: %d calls the budget turned away priced at %.0f answers, want about %.0f", run.SweepValue, d.name, refused, won, want)
					}
				}
				if f > 0.5 {
					continue
				}
				noise := 3 * math.Sqrt(float64(run.Calls)*f*(1-f))
				if float64(run.Succeeded) < float64(none.Succeeded)-noise {
					t.Errorf("failure %s, %s: %d calls answered, fewer than no retries' %d (noise %.0f)",
						run.SweepValue, d.name, run.Succeeded, none.Succeeded, noise)
				}
			}
		}
	})
	t.Run("down", func(t *testing.T) {
		t.Parallel()
		r := doNoHarm(t, "do-no-harm-outage", func(s *Scenario) {
			s.Duration, s.Warmup = 100*time.Second, 10*time.Second
			s.Services[0].Outages[0].Start = 30 * time.Second
			s.Policies = s.Policies[:5]
		})
		none := runOf(t, r, noRetries, "")
		for _, d := range doNoHarmDefaults {
			run := runOf(t, r, d.name, "")
			if float64(run.Attempts) > 1.01*float64(none.Attempts)+d.reserve {
				t.Errorf("down: %s sent %d attempts, no retries %d: want no more while the dependency is down", d.name, run.Attempts, none.Attempts)
			}
			if rec, ok := recoveredAfter(t, r, run); !ok || rec > 3*time.Second {
				t.Errorf("down: %s's answers back %v after the outage (%v): want within 3 s", d.name, rec, ok)
			}
		}
	})
	t.Run("overload", func(t *testing.T) {
		t.Parallel()
		r := doNoHarm(t, "do-no-harm-overload", func(s *Scenario) {
			s.Duration, s.Warmup = 50*time.Second, 10*time.Second
			s.Sweep.Values = []string{"100/s", "200/s"}
			s.Policies = s.Policies[:5]
		})
		for _, run := range r.Runs {
			none := runOf(t, r, noRetries, run.SweepValue)
			for _, d := range doNoHarmDefaults {
				if run.Policy != d.name {
					continue
				}
				if max := (1+d.share)*float64(none.Attempts) + d.reserve; float64(run.Attempts) > max {
					t.Errorf("overload at %s: %s sent %d attempts, no retries %d: want at most %.0f", run.SweepValue, d.name, run.Attempts, none.Attempts, max)
				}
				// A breaker may open on a queue that refuses everything for
				// a while, trading answers for load; the budgets alone
				// answer what no retries does.
				if d.name != "default preset" && run.Succeeded < none.Succeeded*98/100 {
					t.Errorf("overload at %s: %s answered %d, no retries %d", run.SweepValue, d.name, run.Succeeded, none.Succeeded)
				}
			}
		}
	})
}

// TestDoNoHarmDocs checks docs/why.md's tables against the shipped
// do-no-harm scenarios' runs (RECOIL_LONG=1; -update rewrites them).
func TestDoNoHarmDocs(t *testing.T) {
	if !long() {
		t.Skip("the shipped do-no-harm runs take a minute: RECOIL_LONG=1 checks docs/why.md's tables against them")
	}
	t.Parallel()
	tables := map[string]string{
		"independent": independentTable(t, runShipped(t, "do-no-harm", 1)),
		"down":        outageTable(t, runShipped(t, "do-no-harm-outage", 1)),
		"overload":    overloadTable(t, runShipped(t, "do-no-harm-overload", 1)),
	}
	const path = "../../docs/why.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := doc
	for _, name := range []string{"independent", "down", "overload"} {
		begin, end := "<!-- do-no-harm:"+name+" -->\n", "<!-- /do-no-harm:"+name+" -->"
		i, j := bytes.Index(out, []byte(begin)), bytes.Index(out, []byte(end))
		if i < 0 || j < i {
			t.Fatalf("docs/why.md has no %q … %q block", begin, end)
		}
		got := string(out[i+len(begin) : j])
		if got != tables[name] {
			if !*update {
				t.Errorf("docs/why.md's %s table differs from the run (go test -run TestDoNoHarmDocs -update with RECOIL_LONG=1 rewrites it):\n%s\nwant:\n%s", name, got, tables[name])
			}
			out = append(out[:i+len(begin):i+len(begin)], append([]byte(tables[name]), out[j:]...)...)
		}
	}
	if *update && !bytes.Equal(out, doc) {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// perCallOf is attempts per call.
func perCallOf(r RunResult) float64 { return float64(r.Attempts) / float64(r.Calls) }

// recoveredAfter returns how long after the scenario's outage ends the
// run's answers (calls that succeeded, a second at a time) are back at
// 90 % of their rate in the ten seconds before it began.
func recoveredAfter(t *testing.T, r *Result, run RunResult) (time.Duration, bool) {
	t.Helper()
	s := run.Services[0]
	if len(s.Outages) == 0 {
		t.Fatal("no outage")
	}
	o := s.Outages[0]
	rate := func(a, b time.Duration) float64 {
		var n int64
		for _, p := range s.Series {
			if p.T > a && p.T <= b {
				n += p.Delivered
			}
		}
		return float64(n) / (b - a).Seconds()
	}
	before := rate(o.Start-10*time.Second, o.Start)
	end := s.Series[len(s.Series)-1].T
	for d := time.Duration(0); o.End+d+time.Second <= end; d += 200 * time.Millisecond {
		if rate(o.End+d, o.End+d+time.Second) >= 0.9*before {
			return d, true
		}
	}
	return 0, false
}

// independentTable is docs/why.md's table of the independent sweep: per
// policy, the share of calls answered and the attempts per call at each
// failure rate.
func independentTable(t *testing.T, r *Result) string {
	return sweepTable(t, r, func(v string) string {
		f, _ := strconv.ParseFloat(v, 64)
		return fmt.Sprintf("%g %%", 100*f)
	}, func(run RunResult) string {
		return fmt.Sprintf("%.1f %% · %.2f", 100*float64(run.Succeeded)/float64(run.Calls), perCallOf(run))
	})
}

// sweepTable is a table of r's runs, a row per policy and a column per
// sweep value: head names a column, cell writes a run.
func sweepTable(t *testing.T, r *Result, head func(string) string, cell func(RunResult) string) string {
	var b strings.Builder
	var values []string
	for _, run := range r.Runs {
		if run.Policy == noRetries {
			values = append(values, run.SweepValue)
		}
	}
	b.WriteString("| policy |")
	for _, v := range values {
		fmt.Fprintf(&b, " %s |", head(v))
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(values)) + "\n")
	for _, p := range policiesOf(r) {
		fmt.Fprintf(&b, "| %s |", p)
		for _, v := range values {
			fmt.Fprintf(&b, " %s |", cell(runOf(t, r, p, v)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// outageTable is docs/why.md's table of the outage: per policy, calls
// answered, attempts per call, the busiest 200 ms and the time to recover.
func outageTable(t *testing.T, r *Result) string {
	var b strings.Builder
	b.WriteString("| policy | answered | attempts per call | peak per 200 ms | answers back after |\n|---|---:|---:|---:|---:|\n")
	for _, p := range policiesOf(r) {
		run := runOf(t, r, p, "")
		back := "not in the run"
		if d, ok := recoveredAfter(t, r, run); ok {
			back = d.String()
		}
		fmt.Fprintf(&b, "| %s | %.1f %% | %.2f | %d | %s |\n", p, 100*float64(run.Succeeded)/float64(run.Calls), perCallOf(run), run.Peak, back)
	}
	return b.String()
}

// overloadTable is docs/why.md's table of the overload sweep: per policy
// and offered rate, answers a second and attempts per call.
func overloadTable(t *testing.T, r *Result) string {
	return sweepTable(t, r, func(v string) string { return v + " offered" }, func(run RunResult) string {
		return fmt.Sprintf("%.0f/s · %.2f", run.Goodput, perCallOf(run))
	})
}

// policiesOf lists the run's policies in the scenario's order.
func policiesOf(r *Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, run := range r.Runs {
		if !seen[run.Policy] {
			seen[run.Policy] = true
			out = append(out, run.Policy)
		}
	}
	return out
}
