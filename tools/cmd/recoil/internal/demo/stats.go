package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
)

// Spread is one figure over several runs: the median, the least and the
// greatest, and each run's value in the order run. The zero Spread is no
// runs.
type Spread struct {
	Median int64   `json:"median"`
	Min    int64   `json:"min"`
	Max    int64   `json:"max"`
	Values []int64 `json:"values"`
}

// spreadOf returns the spread of vs; the median of an even number of
// values is the mean of the middle two, rounded down.
func spreadOf(vs []int64) Spread {
	if len(vs) == 0 {
		return Spread{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1], Values: slices.Clone(vs)}
}

// String formats the spread as "median (min–max)", or the one value when
// every run agreed.
func (s Spread) String() string {
	if s.Min == s.Max {
		return fmt.Sprint(s.Median)
	}
	return fmt.Sprintf("%d (%d–%d)", s.Median, s.Min, s.Max)
}

// Times is a duration over several runs, as Spread is a count.
type Times struct {
	Median time.Duration
	Min    time.Duration
	Max    time.Duration
	Values []time.Duration
}

func timesOf(ds []time.Duration) Times {
	vs := make([]int64, len(ds))
	for i, d := range ds {
		vs[i] = int64(d)
	}
	s := spreadOf(vs)
	return Times{Median: time.Duration(s.Median), Min: time.Duration(s.Min), Max: time.Duration(s.Max), Values: slices.Clone(ds)}
}

// String formats the durations as "median (min–max)".
func (t Times) String() string {
	if t.Median <= 0 {
		return "-"
	}
	if t.Min == t.Max {
		return textfmt.Duration(t.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", textfmt.Duration(t.Median), textfmt.Duration(t.Min), textfmt.Duration(t.Max))
}

// MarshalJSON writes the durations in float milliseconds, the convention of
// every recoil -json output (package internal/textfmt).
func (t Times) MarshalJSON() ([]byte, error) {
	vs := make([]float64, len(t.Values))
	for i, d := range t.Values {
		vs[i] = textfmt.Millis(d)
	}
	return json.Marshal(struct {
		Median float64   `json:"median_ms"`
		Min    float64   `json:"min_ms"`
		Max    float64   `json:"max_ms"`
		Values []float64 `json:"values_ms"`
	}{textfmt.Millis(t.Median), textfmt.Millis(t.Min), textfmt.Millis(t.Max), vs})
}

// Figures are what one row came to over its runs: measured by the gateway
// on loopback, or predicted by the simulator with the same seeds.
type Figures struct {
	// Attempts the gateway counted (or the simulated gateway).
	Attempts Spread `json:"attempts"`
	// Peak is the most attempts in any span of the window.
	Peak Spread `json:"peak"`
	// AllOKAt is when the last caller was accepted, from the first attempt.
	AllOKAt Times `json:"all_accepted_at"`
	// Resubmitted counts the logical requests callers began again after
	// their retry loop gave up, most refused by an open breaker before any
	// attempt was sent: they are not attempts, and the gateway never sees
	// them.
	Resubmitted Spread `json:"resubmitted"`
	// Everyone reports whether every caller was accepted in every run.
	Everyone bool `json:"everyone_accepted"`
}

// figures accumulates one row's runs.
type figures struct {
	attempts, peak, resubmits []int64
	allOK                     []time.Duration
	everyone                  bool
}

func (f *figures) add(attempts, peak, resubmits int64, allOK time.Duration, everyone bool) {
	if len(f.attempts) == 0 {
		f.everyone = true
	}
	f.attempts = append(f.attempts, attempts)
	f.peak = append(f.peak, peak)
	f.resubmits = append(f.resubmits, resubmits)
	f.allOK = append(f.allOK, allOK)
	f.everyone = f.everyone && everyone
}

func (f *figures) summary() Figures {
	return Figures{Attempts: spreadOf(f.attempts), Peak: spreadOf(f.peak), AllOKAt: timesOf(f.allOK),
		Resubmitted: spreadOf(f.resubmits), Everyone: f.everyone}
}

// Band is how far the simulator's medians move when the machine wakes its
// callers earlier or later than calibrated: each run is predicted on an
// idle machine, the calibrated one and a busier one, each run's least and
// greatest prediction kept, and each pair is the median of the least and
// the median of the greatest. A measured median inside a band, or near
// it, is one the model predicts for some lateness the machine shows.
type Band struct {
	// Attempts, Peak and AllOKAt are each [least, greatest], the figures
	// of Figures of the same names.
	Attempts [2]int64
	Peak     [2]int64
	AllOKAt  [2]time.Duration
}

// MarshalJSON writes the band with its durations in float milliseconds.
func (b Band) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Attempts [2]int64   `json:"attempts"`
		Peak     [2]int64   `json:"peak"`
		AllOKAt  [2]float64 `json:"all_accepted_at_ms"`
	}{b.Attempts, b.Peak, [2]float64{textfmt.Millis(b.AllOKAt[0]), textfmt.Millis(b.AllOKAt[1])}})
}

// bandOf accumulates a Band: for each run (by index), the least and the
// greatest of each figure over the machines it was predicted on.
type bandOf struct {
	lo, hi [3][]int64 // attempts, peak, all accepted at
}

func (b *bandOf) add(run int, attempts, peak int64, allOK time.Duration) {
	for i, v := range [3]int64{attempts, peak, int64(allOK)} {
		if run >= len(b.lo[i]) {
			b.lo[i] = append(b.lo[i], v)
			b.hi[i] = append(b.hi[i], v)
			continue
		}
		b.lo[i][run] = min(b.lo[i][run], v)
		b.hi[i][run] = max(b.hi[i][run], v)
	}
}

func (b *bandOf) band() Band {
	var m [2][3]int64
	for i := range 3 {
		m[0][i], m[1][i] = spreadOf(b.lo[i]).Median, spreadOf(b.hi[i]).Median
	}
	return Band{
		Attempts: [2]int64{m[0][0], m[1][0]},
		Peak:     [2]int64{m[0][1], m[1][1]},
		AllOKAt:  [2]time.Duration{time.Duration(m[0][2]), time.Duration(m[1][2])},
	}
}
