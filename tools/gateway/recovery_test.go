package gateway

import (
	"net/http"
	"testing"
	"time"
)

// refEnd is the reference for a recovering outage's end: the first
// millisecond t ≥ start+duration such that every window (span k ms) ending
// in [t-hold, t-1] held fewer than below arrivals. arrivals are distinct
// milliseconds in order; horizon bounds the search.
func refEnd(arrivals []int64, start, duration, k, below, hold, horizon int64) (int64, bool) {
	cum := make([]int64, horizon+2) // cum[s+1] = arrivals at or before s
	for _, a := range arrivals {
		if a <= horizon {
			cum[a+1]++
		}
	}
	for s := int64(1); s < int64(len(cum)); s++ {
		cum[s] += cum[s-1]
	}
	count := func(s int64) int64 { // the window ending at s
		if s < 0 {
			return 0
		}
		return cum[s+1] - cum[max(s-k+1, 0)]
	}
	for t := start + duration; t <= horizon; t++ {
		cool := true
		for s := t - hold; s < t && cool; s++ {
			cool = count(s) < below
		}
		if cool {
			return t, true
		}
	}
	return 0, false
}

// every returns the milliseconds from, from+step, … up to and including to.
func every(from, to, step int64) []int64 {
	var out []int64
	for t := from; t <= to; t += step {
		out = append(out, t)
	}
	return out
}

func TestRecoveryWaitsForLoadToFall(t *testing.T) {
	recovering := Outage{Duration: 700 * time.Millisecond, Recovery: Recovery{Below: 5, For: 300 * time.Millisecond}}
	tests := []struct {
		name     string
		outage   Outage
		arrivals []int64
		wantEnd  int64 // hand-computed where noted; -1 means still down at the end
	}{
		{
			// One attempt, then silence: the load is low from the start,
			// so the outage ends at its minimum, 700 ms.
			name: "no load", outage: recovering,
			arrivals: []int64{0, 699, 700, 800}, wantEnd: 700,
		},
		{
			// 20 attempts per 200 ms until 1500 ms, then 2. The window
			// ending at 1669 ms still holds 1470..1500 and 1600 (5); the
			// one ending at 1670 holds 4, so the load is below 5 from
			// 1670 ms and the outage ends 300 ms later, at 1970 ms.
			name: "hammered until 1500ms", outage: recovering,
			arrivals: append(every(0, 1500, 10), every(1600, 2400, 100)...), wantEnd: 1970,
		},
		{
			// Hammering stops at 500 ms: below 5 from 660 ms, so it ends
			// at 960 ms, later than its minimum.
			name: "hammered until 500ms", outage: recovering,
			arrivals: append(every(0, 500, 10), every(900, 1100, 20)...), wantEnd: 960,
		},
		{
			// 4 per window is below 5: no delay.
			name: "load just below the threshold", outage: recovering,
			arrivals: every(0, 1500, 50), wantEnd: 700,
		},
		{
			// 5 per window is not below 5: down as long as it lasts.
			name: "load at the threshold", outage: recovering,
			arrivals: every(0, 3000, 40), wantEnd: -1,
		},
		{
			// Without a Recovery the load does not matter.
			name: "fixed outage", outage: Outage{Duration: 700 * time.Millisecond},
			arrivals: every(0, 1500, 10), wantEnd: 700,
		},
		{
			// Load before the outage counts: hammering from 0 to 1100 ms
			// keeps an outage of 1000..1200 ms down until 1560 ms (below
			// 5 from 1260, plus 300).
			name: "load before a later outage",
			outage: Outage{Start: time.Second, Duration: 200 * time.Millisecond,
				Recovery: Recovery{Below: 5, For: 300 * time.Millisecond}},
			arrivals: append(every(0, 1100, 10), every(1500, 1700, 50)...), wantEnd: 1560,
		},
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, Config{Outages: []Outage{tt.outage}})
			o := tt.outage
			start, minEnd := o.Start.Milliseconds(), (o.Start + o.Duration).Milliseconds()
			last := tt.arrivals[len(tt.arrivals)-1]
			ref, ended := minEnd, true
			if o.Recovery.Below > 0 {
				ref, ended = refEnd(tt.arrivals, start, o.Duration.Milliseconds(), 200, int64(o.Recovery.Below), o.Recovery.For.Milliseconds(), last)
			}
			if !ended {
				ref = -1
			}
			if ref != tt.wantEnd {
				t.Fatalf("reference end = %d, hand-computed %d", ref, tt.wantEnd)
			}
			for _, ms := range tt.arrivals {
				d := g.decide(base.Add(time.Duration(ms)*time.Millisecond), &attempt{client: "c"})
				down := ms >= start && (ref < 0 || ms < ref)
				want := http.StatusOK
				if down {
					want = DefaultOutageStatus
				}
				if d.status != want {
					t.Fatalf("attempt at %dms: status %d, want %d (outage %dms..%dms)", ms, d.status, want, start, ref)
				}
			}
			s := g.statsAt(base.Add(time.Duration(last)*time.Millisecond), 0, false)
			st := s.Outages[0]
			if got, want := st.Ended, ref >= 0; got != want {
				t.Fatalf("Ended = %v, want %v", got, want)
			}
			if ref >= 0 && st.End != time.Duration(ref)*time.Millisecond {
				t.Errorf("End = %v, want %v", st.End, time.Duration(ref)*time.Millisecond)
			}
		})
	}
}

func TestPartialOutageAndFailureRate(t *testing.T) {
	// A partial outage fails about its rate of attempts; so does the
	// failure rate outside it; the draws are the seeded PCG's, so the
	// counts are the same on every run.
	tests := []struct {
		name string
		cfg  Config
	}{
		{"outage at rate 0.3", Config{Seed: 5, Outages: []Outage{{Duration: time.Hour, Rate: 0.3}}}},
		{"failure rate 0.3", Config{Seed: 5, FailureRate: 0.3}},
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range tests {
		count := func() int {
			g := mustNew(t, tt.cfg)
			failed := 0
			for i := range 10000 {
				if g.decide(base.Add(time.Duration(i)*time.Millisecond), &attempt{client: "c"}).status != http.StatusOK {
					failed++
				}
			}
			return failed
		}
		got := count()
		if got < 2800 || got > 3200 {
			t.Errorf("%s: %d of 10000 failed, want about 3000", tt.name, got)
		}
		if again := count(); again != got {
			t.Errorf("%s: %d failed, then %d with the same seed", tt.name, got, again)
		}
	}
}

func TestAllowanceRefill(t *testing.T) {
	// 60 per minute: a bucket of 60 refilled at one a second.
	g := mustNew(t, Config{Allowance: 60})
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) decision { return g.decide(base.Add(d), &attempt{client: "c", allowKey: "k"}) }
	for i := range 60 {
		if d := at(0); d.status != http.StatusOK || d.remaining != 59-i {
			t.Fatalf("request %d: status %d, remaining %d; want 200, %d", i+1, d.status, d.remaining, 59-i)
		}
	}
	tests := []struct {
		at         time.Duration
		wantStatus int
		wantWait   time.Duration
	}{
		{0, http.StatusTooManyRequests, time.Second},
		{400 * time.Millisecond, http.StatusTooManyRequests, 600 * time.Millisecond},
		{time.Second, http.StatusOK, 0},
		{time.Second, http.StatusTooManyRequests, time.Second},
		{3500 * time.Millisecond, http.StatusOK, 0}, // 2.5 tokens
		{3500 * time.Millisecond, http.StatusOK, 0}, // 1.5
		{3500 * time.Millisecond, http.StatusTooManyRequests, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		d := at(tt.at)
		if d.status != tt.wantStatus || !near(d.retryAfter, tt.wantWait) {
			t.Errorf("at %v: status %d, wait %v; want %d, %v", tt.at, d.status, d.retryAfter, tt.wantStatus, tt.wantWait)
		}
	}
	// Another key has its own allowance.
	if d := g.decide(base, &attempt{client: "c", allowKey: "other"}); d.status != http.StatusOK {
		t.Errorf("another key: status %d, want 200", d.status)
	}
	if got, want := retryAfterSeconds(600*time.Millisecond), 1; got != want {
		t.Errorf("retryAfterSeconds(600ms) = %d, want %d", got, want)
	}
	if got, want := retryAfterSeconds(1001*time.Millisecond), 2; got != want {
		t.Errorf("retryAfterSeconds(1001ms) = %d, want %d", got, want)
	}
}

func near(a, b time.Duration) bool {
	d := a - b
	return d > -time.Microsecond && d < time.Microsecond
}

func TestLatencyDistributions(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		l        Latency
		lo, hi   time.Duration // every draw within
		meanLo   time.Duration // the mean of 5000 draws within
		meanHi   time.Duration
		constant bool
	}{
		{name: "none", l: Latency{}, lo: 0, hi: 0, meanLo: 0, meanHi: 0},
		{name: "constant", l: Latency{Dist: Constant, Mean: 20 * ms}, lo: 20 * ms, hi: 20 * ms, meanLo: 20 * ms, meanHi: 20 * ms},
		{name: "uniform", l: Latency{Dist: Uniform, Min: 10 * ms, Max: 30 * ms}, lo: 10 * ms, hi: 30 * ms, meanLo: 19 * ms, meanHi: 21 * ms},
		{name: "exponential", l: Latency{Dist: Exponential, Min: 5 * ms, Mean: 20 * ms}, lo: 5 * ms, hi: time.Hour, meanLo: 24 * ms, meanHi: 26 * ms},
		{name: "exponential capped", l: Latency{Dist: Exponential, Mean: 20 * ms, Max: 30 * ms}, lo: 0, hi: 30 * ms, meanLo: 14 * ms, meanHi: 16 * ms},
	}
	for _, tt := range tests {
		g := mustNew(t, Config{Latency: tt.l, Seed: 9})
		var sum time.Duration
		const n = 5000
		for range n {
			d := g.latency()
			if d < tt.lo || d > tt.hi {
				t.Fatalf("%s: latency %v, want within [%v, %v]", tt.name, d, tt.lo, tt.hi)
			}
			sum += d
		}
		if mean := sum / n; mean < tt.meanLo || mean > tt.meanHi {
			t.Errorf("%s: mean latency %v, want within [%v, %v]", tt.name, mean, tt.meanLo, tt.meanHi)
		}
	}
}
