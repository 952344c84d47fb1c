package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/tools/load"
)

// Seed 3's four callers under full jitter: one attempt lands a few
// milliseconds from the outage's end. On the machine as calibrated (a
// millisecond late) and idle it lands before the end and its caller waits
// once more, accepted at 1.72 s; twice as late it lands after, accepted at
// 1.49 s. Both have been measured on one machine from run to run, and the
// band holds both.
func TestBandHoldsBothSides(t *testing.T) {
	cfg := Config{Callers: []int{4}, Policies: []string{"full-jitter"}, Runs: 1, Seed: 3}
	cfg.defaults()
	rows := []Row{{Callers: 4, Policy: "full-jitter"}}
	if err := predict(t.Context(), cfg, 4, Machine{PerAttempt: 130 * time.Microsecond, RoundTrip: time.Millisecond}, rows); err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	near := func(got, want time.Duration) bool { return (got - want).Abs() <= 15*time.Millisecond }
	if got := r.Simulated.AllOKAt.Median; !near(got, 1720*time.Millisecond) {
		t.Errorf("calibrated prediction: everyone accepted at %v, want about 1.72s", got)
	}
	if b := r.Band.AllOKAt; !near(b[0], 1495*time.Millisecond) || !near(b[1], 1720*time.Millisecond) {
		t.Errorf("band %v, want about 1.49s–1.72s", b)
	}
	if r.Band.Attempts[0] > r.Simulated.Attempts.Median || r.Band.Attempts[1] < r.Simulated.Attempts.Median {
		t.Errorf("band attempts %v do not hold the calibrated %v", r.Band.Attempts, r.Simulated.Attempts)
	}
}

// The band takes, for each run, the least and the greatest prediction
// over the machines, and then the medians over the runs.
func TestBandOf(t *testing.T) {
	var b bandOf
	// Three runs on the calibrated machine, then the same three on two others.
	for _, machine := range [][3]int64{{10, 20, 30}, {8, 25, 30}, {12, 20, 40}} {
		for run, v := range machine {
			b.add(run, v, v/2, time.Duration(v)*time.Millisecond)
		}
	}
	got := b.band()
	// Least per run 8, 20, 30; greatest 12, 25, 40.
	if got.Attempts != [2]int64{20, 25} || got.Peak != [2]int64{10, 12} || got.AllOKAt != [2]time.Duration{20 * time.Millisecond, 25 * time.Millisecond} {
		t.Errorf("band = %+v", got)
	}
}

func TestBandNotes(t *testing.T) {
	at := func(ms int64) Times {
		d := time.Duration(ms) * time.Millisecond
		return Times{Median: d, Min: d, Max: d, Values: []time.Duration{d}}
	}
	row := func(measured, simulated int64) Row {
		return Row{
			Callers: 4, Policy: "full-jitter",
			Measured:  Figures{Attempts: spreadOf([]int64{25}), Peak: spreadOf([]int64{15}), AllOKAt: at(measured)},
			Simulated: Figures{Attempts: spreadOf([]int64{25}), Peak: spreadOf([]int64{15}), AllOKAt: at(simulated)},
			Band:      Band{Attempts: [2]int64{24, 25}, Peak: [2]int64{15, 15}, AllOKAt: [2]time.Duration{1490 * time.Millisecond, 1720 * time.Millisecond}},
			Machine:   Machine{PerAttempt: 250 * time.Microsecond, RoundTrip: time.Millisecond, PerAttemptAfter: 300 * time.Microsecond},
		}
	}
	for _, tc := range []struct {
		name     string
		row      Row
		wantNote string
	}{
		{"agrees", row(1720, 1720), ""},
		{"within 15 %", row(1600, 1720), ""},
		{"not everyone accepted", row(0, 1720), ""},
		{"the other side of the edge", row(1720, 1490), "4 callers, full-jitter: all accepted at 1.72s measured, 1.49s simulated. How busy the machine is moves it: simulating it anywhere from idle to twice as slow as measured (it took 250µs an attempt before the rows, 300µs after) gives 1.49s to 1.72s."},
		{"lateness does not move it", func() Row {
			r := row(1720, 1490)
			r.Band.AllOKAt = [2]time.Duration{1490 * time.Millisecond, 1490 * time.Millisecond}
			r.Machine.PerAttemptAfter = 0 // interrupted before the pace was measured again
			return r
		}(), "4 callers, full-jitter: all accepted at 1.72s measured, 1.49s simulated. Simulating this machine anywhere from idle to twice as slow as measured (it took 250µs an attempt before the rows) gives the same: the machine's pace changed while the runs ran."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notes := (&Report{Rows: []Row{tc.row}}).bandNotes()
			if tc.wantNote == "" {
				if len(notes) > 0 {
					t.Errorf("notes %q, want none", notes)
				}
				return
			}
			if len(notes) != 1 || notes[0] != tc.wantNote {
				t.Errorf("notes %q, want %q", notes, tc.wantNote)
			}
			var text strings.Builder
			if err := (&Report{Rows: []Row{tc.row}}).WriteText(&text); err != nil || !strings.Contains(strings.Join(strings.Fields(text.String()), " "), tc.wantNote) {
				t.Errorf("WriteText lacks the note (err %v):\n%s", err, text.String())
			}
		})
	}
}

// A thousand callers under the default policy begin their requests again
// every 100 ms while the breaker is open, ten thousand a second: the run's
// bound on logical requests (the load driver's default is 10,000) leaves
// room for every one until everyone is accepted, through a three-second
// outage. What the bound decides is whether the run stopped on it; whether
// everyone got through within the run's 30 s after the outage is the
// machine's pace, and a machine slowed enough (the race detector, other
// work) begins fewer again than the default bound, and cannot tell.
func TestManyCallersAllAccepted(t *testing.T) {
	testsvc.SkipUnlessLong(t, "a thousand callers on loopback (15 s of real time)")
	const n = 1000
	cfg := Config{Outage: 3 * time.Second}
	cfg.defaults()
	m, err := measure(t.Context(), cfg, n, "default", 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.stopped == load.StoppedMaxRequests {
		t.Errorf("%d callers, default: the run stopped on its bound on logical requests (%d begun again), everyone accepted %v", n, m.resubmits, m.everyone)
	}
	if m.resubmits+n < load.DefaultMaxRequests {
		t.Skipf("only %d begun again, within the load driver's default bound: this run does not test the demo's", m.resubmits)
	}
	if !m.everyone {
		t.Errorf("%d callers, default: not everyone accepted (%d begun again, stopped %q)", n, m.resubmits, m.stopped)
	}
}

// Each run is predicted from idle to twice as late (and a millisecond
// more), at the pace measured before the rows and, when it differs, at the
// pace measured after.
func TestMachines(t *testing.T) {
	us := time.Microsecond
	for _, tc := range []struct {
		name string
		m    Machine
		want []Machine
	}{
		{"no pace after (interrupted)", Machine{PerAttempt: 200 * us, RoundTrip: 700 * us},
			[]Machine{{PerAttempt: 200 * us, RoundTrip: 700 * us}, {PerAttempt: 200 * us}, {PerAttempt: 200 * us, RoundTrip: 2400 * us}}},
		{"the same pace after", Machine{PerAttempt: 200 * us, RoundTrip: 700 * us, PerAttemptAfter: 200 * us},
			[]Machine{{PerAttempt: 200 * us, RoundTrip: 700 * us}, {PerAttempt: 200 * us}, {PerAttempt: 200 * us, RoundTrip: 2400 * us}}},
		{"a slower pace after", Machine{PerAttempt: 200 * us, RoundTrip: 700 * us, PerAttemptAfter: 300 * us},
			[]Machine{{PerAttempt: 200 * us, RoundTrip: 700 * us}, {PerAttempt: 200 * us}, {PerAttempt: 200 * us, RoundTrip: 2400 * us},
				{PerAttempt: 300 * us, RoundTrip: 700 * us}, {PerAttempt: 300 * us}, {PerAttempt: 300 * us, RoundTrip: 2400 * us}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := machines(tc.m)
			if len(got) != len(tc.want) {
				t.Fatalf("machines(%+v) = %+v, want %+v", tc.m, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("machines(%+v)[%d] = %+v, want %+v", tc.m, i, got[i], tc.want[i])
				}
			}
		})
	}
}
