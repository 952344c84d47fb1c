package budget

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/recoil-go/recoil/internal/fuzzgen"
)

// fixedRand always draws v and counts its draws.
type fixedRand struct {
	v     float64
	draws int
}

func (r *fixedRand) Float64() float64 { r.draws++; return r.v }

// history makes requests attempts at now, of which accepts are accepted and
// the rest rejected as overloaded. Every attempt is let through by the draw.
func history(a *Adaptive, now time.Time, requests, accepts int) {
	for i := range requests {
		a.AdmitAt(now)
		if i < accepts {
			a.RecordAt(now, success)
		} else {
			a.RecordAt(now, overload)
		}
	}
}

func TestAdaptiveDefaults(t *testing.T) {
	for name, a := range map[string]*Adaptive{
		"zero value":  new(Adaptive),
		"zero config": NewAdaptive(AdaptiveConfig{}),
		"explicit":    NewAdaptive(AdaptiveConfig{K: 2, Window: 2 * time.Minute}),
		"negative":    NewAdaptive(AdaptiveConfig{K: -1, Window: -1}),
	} {
		if got, want := a.StateAt(t0), (AdaptiveState{}); got != want {
			t.Errorf("%s: StateAt(t0) = %+v, want %+v", name, got, want)
		}
		history(a, t0, 100, 30)
		if got, want := a.RejectProbabilityAt(t0), (100-2*30)/101.0; got != want {
			t.Errorf("%s: p after 100 requests, 30 accepts = %v, want %v (K = 2)", name, got, want)
		}
		if got, want := a.RejectProbabilityAt(at(2*time.Minute)), 0.0; got != want {
			t.Errorf("%s: p 2 minutes later = %v, want %v", name, got, want)
		}
	}
}

// TestAdaptiveFormula pins the SRE book's
// p = max(0, (requests − K·accepts) / (requests + 1)).
func TestAdaptiveFormula(t *testing.T) {
	tests := []struct {
		requests, accepts int
		k                 float64
		p                 float64
	}{
		{0, 0, 2, 0},
		{1, 0, 2, 1.0 / 2},
		{10, 4, 2, 2.0 / 11},
		{100, 30, 2, 40.0 / 101},
		{100, 50, 2, 0},
		{100, 80, 2, 0},
		{100, 0, 2, 100.0 / 101},
		{100, 60, 1.1, 34.0 / 101},
		{100, 10, 5, 50.0 / 101},
	}
	for _, tt := range tests {
		a := NewAdaptive(AdaptiveConfig{K: tt.k, Rand: &fixedRand{v: 0.9999999}})
		history(a, t0, tt.requests, tt.accepts)
		s := a.StateAt(t0)
		if s.Requests != int64(tt.requests) || s.Accepts != int64(tt.accepts) {
			t.Errorf("K=%v: counts = %d/%d, want %d/%d", tt.k, s.Requests, s.Accepts, tt.requests, tt.accepts)
		}
		if math.Abs(s.RejectProbability-tt.p) > 1e-12 {
			t.Errorf("K=%v, %d requests, %d accepts: p = %v, want %v", tt.k, tt.requests, tt.accepts, s.RejectProbability, tt.p)
		}
	}
}

// TestAdaptiveAccepts pins what counts as accepted: the backend processed
// the attempt (Success, Failure, Permanent); Overload is a rejection;
// Ignored counts nothing.
func TestAdaptiveAccepts(t *testing.T) {
	tests := []struct {
		r       Result
		accepts int64
	}{
		{Success, 1},
		{Failure, 1},
		{Permanent, 1},
		{Overload, 0},
		{Ignored, 0},
		{Result(200), 0},
	}
	for _, tt := range tests {
		var a Adaptive
		a.AdmitAt(t0)
		a.RecordAt(t0, Outcome{Attempt: 1, Result: tt.r})
		a.RetryAt(t0, CauseError)
		a.RecordAt(t0, Outcome{Attempt: 2, Result: tt.r})
		if got, want := a.StateAt(t0), (AdaptiveState{Requests: 2, Accepts: 2 * tt.accepts}); got.Requests != want.Requests || got.Accepts != want.Accepts {
			t.Errorf("two attempts recorded %v: state = %+v, want %+v", tt.r, got, want)
		}
	}
}

// TestAdaptiveDraws pins the refusal rule: an attempt is refused when the
// draw is below p, p is computed before the attempt is counted, and refused
// attempts count as requests.
func TestAdaptiveDraws(t *testing.T) {
	p := 40.0 / 101 // 100 requests, 30 accepts
	tests := []struct {
		draw  float64
		admit bool
	}{
		{0, false},
		{p - 1e-9, false},
		{p, true},
		{0.99, true},
	}
	for _, tt := range tests {
		for _, retry := range []bool{false, true} {
			rnd := &fixedRand{v: 0.9999999}
			a := NewAdaptive(AdaptiveConfig{Rand: rnd})
			history(a, t0, 100, 30)
			rnd.v = tt.draw
			var got bool
			if retry {
				got = a.RetryAt(t0, CauseTimeout)
			} else {
				got = a.AdmitAt(t0)
			}
			if got != tt.admit {
				t.Errorf("retry=%v, p=%.4f, draw %v: allowed = %v, want %v", retry, p, tt.draw, got, tt.admit)
			}
			if got, want := a.StateAt(t0).Requests, int64(101); got != want {
				t.Errorf("retry=%v, draw %v: requests = %d, want %d (refused ones count)", retry, tt.draw, got, want)
			}
		}
	}
}

func TestAdaptiveNoDrawWhenHealthy(t *testing.T) {
	rnd := &fixedRand{v: 0}
	a := NewAdaptive(AdaptiveConfig{Rand: rnd})
	for i := range 1000 {
		if !a.AdmitAt(t0) {
			t.Fatalf("attempt %d refused with every attempt accepted", i)
		}
		a.RecordAt(t0, success)
	}
	if rnd.draws != 0 {
		t.Errorf("draws with p = 0: %d, want 0", rnd.draws)
	}
}

// TestAdaptiveOverloadAndRecovery walks an outage: the backend rejects
// everything, the throttle refuses most attempts locally, and once the
// window has forgotten the outage it sends everything again.
func TestAdaptiveOverloadAndRecovery(t *testing.T) {
	a := NewAdaptive(AdaptiveConfig{Rand: rand.New(rand.NewPCG(1, 2))})
	sent := 0
	for i := range 1000 {
		now := at(time.Duration(i) * 10 * time.Millisecond)
		if a.AdmitAt(now) {
			sent++
			a.RecordAt(now, overload)
		}
	}
	if sent > 50 {
		t.Errorf("attempts sent to a backend rejecting everything = %d of 1000, want few", sent)
	}
	if p := a.RejectProbabilityAt(at(10 * time.Second)); p < 0.99 {
		t.Errorf("p after the outage = %v, want > 0.99", p)
	}
	if p := a.RejectProbabilityAt(at(10*time.Second + 2*time.Minute)); p != 0 {
		t.Errorf("p two minutes after the outage = %v, want 0", p)
	}
}

func TestAdaptiveWindow(t *testing.T) {
	tests := []struct {
		window time.Duration
		after  time.Duration
		counts int64
	}{
		{0, 119 * time.Second, 100},
		{0, 2 * time.Minute, 0},
		{10 * time.Second, 9 * time.Second, 100},
		{10 * time.Second, 10 * time.Second, 0},
		{0, -time.Minute, 100},    // back less than 0.9·Window: still counted
		{0, -2 * time.Minute, 0},  // a clock step back: start afresh
		{0, 1000 * time.Hour, 0},  // a long suspension
		{time.Nanosecond, 9, 100}, // windows under 10 ns are 10 ns
		{time.Nanosecond, 10, 0},
	}
	for _, tt := range tests {
		a := NewAdaptive(AdaptiveConfig{Window: tt.window})
		history(a, t0, 100, 100)
		if got := a.StateAt(at(tt.after)).Requests; got != tt.counts {
			t.Errorf("Window %v: requests %v later = %d, want %d", tt.window, tt.after, got, tt.counts)
		}
	}
}

func TestAdaptiveProperty(t *testing.T) { fuzzgen.ForRandomInputs(t, 300, 4000, checkAdaptiveProperty) }

func FuzzAdaptiveProperty(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 4000)
	f.Fuzz(func(t *testing.T, data []byte) { checkAdaptiveProperty(t, fuzzgen.New(data)) })
}

func checkAdaptiveProperty(t testing.TB, g *fuzzgen.Gen) {
	a := NewAdaptive(AdaptiveConfig{
		K:    g.Float64Range(0.5, 5),
		Rand: rand.New(rand.NewPCG(g.Uint64(), 0)),
	})
	now := t0
	n := g.IntRange(1, 1000)
	for i := range n {
		switch g.IntRange(0, 3) {
		case 0: // mostly small steps forward
			now = now.Add(time.Duration(g.Int64Range(0, int64(time.Minute))))
		case 1: // sometimes back
			now = now.Add(-time.Duration(g.Int64Range(0, int64(5*time.Minute))))
		}
		switch g.IntRange(0, 2) {
		case 0:
			a.AdmitAt(now)
		case 1:
			a.RetryAt(now, Cause(g.IntRange(0, 2)))
		case 2:
			a.RecordAt(now, Outcome{Attempt: 1, Result: fuzzgen.Pick(g, Success, Failure, Overload, Permanent, Ignored)})
		}
		p := a.RejectProbabilityAt(now)
		if !(p >= 0 && p < 1) {
			t.Fatalf("step %d: p = %v, want in [0, 1)", i, p)
		}
	}
}

func TestAdaptiveConcurrent(t *testing.T) {
	// Attempts in flight count as requests not (yet) accepted, so even a
	// healthy backend sees some local refusals under concurrency; every
	// attempt is counted, refused or not.
	var a Adaptive
	hammer(8, 1000, func(g, i int) {
		now := at(time.Duration(i) * time.Millisecond)
		a.AdmitAt(now)
		a.RecordAt(now, success)
	})
	if got, want := a.StateAt(at(time.Second)), (AdaptiveState{Requests: 8000, Accepts: 8000}); got != want {
		t.Errorf("state after 8×1000 concurrent accepted attempts = %+v, want %+v", got, want)
	}
	// An overload from every goroutine at once: p rises, no count is lost.
	hammer(8, 1000, func(g, i int) {
		now := at(time.Second + time.Duration(i)*time.Millisecond)
		a.RetryAt(now, CauseError)
		a.RecordAt(now, overload)
	})
	s := a.StateAt(at(2 * time.Second))
	if s.Requests != 16000 || s.Accepts != 8000 {
		t.Errorf("counts after 8000 more overloaded attempts = %d/%d, want 16000/8000", s.Requests, s.Accepts)
	}
}

func BenchmarkAdaptive(b *testing.B) {
	b.Run("admit-record-success", func(b *testing.B) {
		b.ReportAllocs()
		var a Adaptive
		for b.Loop() {
			a.AdmitAt(t0)
			a.RecordAt(t0, success)
		}
	})
	b.Run("admit-record-success-clock", func(b *testing.B) {
		b.ReportAllocs()
		var a Adaptive
		for b.Loop() {
			a.AdmitAt(time.Time{})
			a.RecordAt(time.Time{}, success)
		}
	})
	b.Run("admit-record-success-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var a Adaptive
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				a.AdmitAt(t0)
				a.RecordAt(t0, success)
			}
		})
	})
	// Half the attempts rejected: every admission draws.
	b.Run("admit-throttling", func(b *testing.B) {
		b.ReportAllocs()
		var a Adaptive
		history(&a, t0, 1000, 250)
		for b.Loop() {
			a.AdmitAt(t0)
		}
	})
	b.Run("retry-throttling-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var a Adaptive
		history(&a, t0, 1000, 250)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				a.RetryAt(t0, CauseError)
			}
		})
	})
}
