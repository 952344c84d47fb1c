package metricdef_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/metricdef"
)

func TestOutcome(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		e    recoil.AttemptEvent
		want string
	}{
		{"success", recoil.AttemptEvent{Attempt: 1}, "success"},
		{"failure", recoil.AttemptEvent{Err: boom, Verdict: recoil.Verdict{Class: recoil.ClassOverloaded}}, "overloaded"},
		{"canceled by the caller", recoil.AttemptEvent{Err: boom, Verdict: recoil.Verdict{Class: recoil.ClassCanceled}}, "canceled"},
		// A hedge's loser is reported with no error and a canceled verdict.
		{"abandoned when another answered", recoil.AttemptEvent{Verdict: recoil.Verdict{Class: recoil.ClassCanceled, Reason: "another attempt answered first"}}, "canceled"},
	}
	for _, tt := range tests {
		if got := metricdef.Outcome(tt.e); got != tt.want {
			t.Errorf("%s: Outcome = %q, want %q", tt.name, got, tt.want)
		}
		if i := metricdef.OutcomeIndex(tt.e); i < 0 || metricdef.Outcomes()[i] != tt.want {
			t.Errorf("%s: OutcomeIndex = %d, want the index of %q", tt.name, i, tt.want)
		}
	}
}

// TestWhy holds the why labels to recoil's own reasons: each reason
// DefaultFallbackRule gives is its own label, as are the Fallback's for a
// target passed over; anything else is other.
func TestWhy(t *testing.T) {
	whys := metricdef.Whys()
	if len(whys) != metricdef.NumWhys || whys[len(whys)-1] != metricdef.WhyOther {
		t.Fatalf("Whys() = %q: want %d labels, other last", whys, metricdef.NumWhys)
	}
	seen := map[string]bool{}
	for i, w := range whys {
		if seen[w] {
			t.Errorf("Whys() has %q twice", w)
		}
		seen[w] = true
		if got := metricdef.WhyIndex(w); got != i {
			t.Errorf("WhyIndex(%q) = %d, want %d", w, got, i)
		}
	}
	for _, v := range []recoil.Verdict{
		recoil.StatusVerdict(404), recoil.StatusVerdict(401), recoil.StatusVerdict(403), recoil.StatusVerdict(402),
		recoil.StatusVerdict(413), recoil.StatusVerdict(503), recoil.StatusVerdict(529), recoil.StatusVerdict(429),
		{Class: recoil.ClassPermanent, Code: "insufficient_quota"},
		{Class: recoil.ClassPermanent, Code: "context_length_exceeded"},
	} {
		lv := recoil.DefaultFallbackRule(v, recoil.DefaultCooldown)
		if !lv.Move || lv.Why == "" {
			t.Fatalf("DefaultFallbackRule(%+v) = %+v, want a move with a reason", v, lv)
		}
		if got := metricdef.Why(lv.Why); got != lv.Why {
			t.Errorf("Why(%q) = %q, want itself (DefaultFallbackRule's)", lv.Why, got)
		}
	}
	for left, want := range map[string]string{
		"cooling down":                            "cooling down",
		"cooling down, then circuit open":         "cooling down",
		"cooling down, then allowance exhausted":  "cooling down",
		"moved on":                                metricdef.WhyOther,
		"tenant 4711 is over its plan":            metricdef.WhyOther,
		"Overloaded":                              metricdef.WhyOther,
		strings.Repeat("x", 1<<16):                metricdef.WhyOther,
		"overloaded\x00":                          metricdef.WhyOther,
		"sk-live-0123456789 refused by the proxy": metricdef.WhyOther,
	} {
		if got := metricdef.Why(left); got != want {
			t.Errorf("Why(%.40q) = %q, want %q", left, got, want)
		}
	}
}

func TestTargetLabel(t *testing.T) {
	long := strings.Repeat("m", metricdef.MaxTargetLen+10)
	// A name whose cut would split a rune: 63 bytes and then "é".
	split := strings.Repeat("m", metricdef.MaxTargetLen-1) + "é"
	tests := map[string]string{
		"primary":    "primary",
		"target 3":   "target 3",
		"":           metricdef.TargetOther,
		long:         long[:metricdef.MaxTargetLen],
		split:        split[:metricdef.MaxTargetLen-1],
		"bad\xffone": "bad\uFFFDone",
	}
	for name, want := range tests {
		got := metricdef.TargetLabel(name)
		if got != want {
			t.Errorf("TargetLabel(%q) = %q, want %q", name, got, want)
		}
		if len(got) > metricdef.MaxTargetLen || !utf8.ValidString(got) {
			t.Errorf("TargetLabel(%q) = %q: longer than %d bytes or not UTF-8", name, got, metricdef.MaxTargetLen)
		}
	}
}

// series counts the series a TargetSeries made, by label.
type series struct {
	mu   sync.Mutex
	made map[string]int
}

func (s *series) new(label string) *string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.made[label]++
	return &label
}

func TestTargetSeries(t *testing.T) {
	s := &series{made: map[string]int{}}
	ts := &metricdef.TargetSeries[string]{New: s.new}
	p := &recoil.Policy{Fallback: &recoil.Fallback{Targets: []recoil.Target{{Name: "primary"}, {}, {Name: "secondary"}}}}
	metricdef.Register(ts, p)
	if len(s.made) != 2 || s.made["primary"] != 1 || s.made["secondary"] != 1 {
		t.Fatalf("Register made %v, want primary and secondary", s.made)
	}

	// Many goroutines meet many names at once: the first MaxTargets names
	// (primary and secondary among them) get series of their own, once
	// each; all others share other's.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 3 * metricdef.MaxTargets {
				name := fmt.Sprintf("t%02d", (i+g)%(3*metricdef.MaxTargets))
				if got := *ts.Get(name); got != name && got != metricdef.TargetOther {
					t.Errorf("Get(%q) = %q", name, got)
				}
			}
		})
	}
	wg.Wait()
	if len(s.made) != metricdef.MaxTargets+1 {
		t.Errorf("%d series made, want %d: %v", len(s.made), metricdef.MaxTargets+1, s.made)
	}
	for label, n := range s.made {
		if n != 1 {
			t.Errorf("series %q made %d times", label, n)
		}
	}
	if got := *ts.Get("primary"); got != "primary" {
		t.Errorf("Get(primary) = %q after the bound was reached", got)
	}
	if got := *ts.Get("a name never seen"); got != metricdef.TargetOther {
		t.Errorf("Get(a new name) = %q, want other", got)
	}

	// Names cut to one label share its series.
	s2 := &series{made: map[string]int{}}
	ts2 := &metricdef.TargetSeries[string]{New: s2.new}
	a, b := ts2.Get(strings.Repeat("m", 100)+"a"), ts2.Get(strings.Repeat("m", 100)+"b")
	if a != b || len(s2.made) != 1 {
		t.Errorf("two names cut to one label: series %p and %p, %v made", a, b, s2.made)
	}

	if n := testing.AllocsPerRun(100, func() {
		ts.Get("primary")
		ts.Get("a name never seen")
	}); n != 0 {
		t.Errorf("Get allocates %v times, want 0", n)
	}
}

func TestPolicyTargets(t *testing.T) {
	var pt metricdef.PolicyTargets[string]
	s := &series{made: map[string]int{}}
	a, b, c := pt.For("payments", s.new), pt.For("payments", s.new), pt.For("search", s.new)
	if a != b || a == c {
		t.Errorf("For: one policy's TargetSeries differ (%p, %p), or two policies share one (%p)", a, b, c)
	}
}

func TestTargets(t *testing.T) {
	var got []string
	metricdef.Targets([]recoil.TargetReport{
		{Target: "primary", Attempts: 2, Left: "overloaded"},
		{Target: "cold", Left: "cooling down"},
		{Target: "odd", Attempts: -3},
		{Target: "secondary", Attempts: 1},
	}, func(name string, attempts, why int) {
		w := "-"
		if why >= 0 {
			w = metricdef.Whys()[why]
		}
		got = append(got, fmt.Sprintf("%s:%d:%s", name, attempts, w))
	})
	want := "primary:2:overloaded cold:0:cooling down odd:0:- secondary:1:-"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("Targets: %s, want %s", s, want)
	}
}
