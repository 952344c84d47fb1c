package budget

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recoil-go/recoil/internal/fuzzgen"
)

func TestRatioDefaults(t *testing.T) {
	for name, r := range map[string]*Ratio{
		"zero value":  new(Ratio),
		"zero config": NewRatio(RatioConfig{}),
		"explicit":    NewRatio(RatioConfig{TTL: 10 * time.Second, MinRetriesPerSec: 10, Percent: 0.2}),
	} {
		if got, want := r.StateAt(t0), (RatioState{Balance: 100, Reserve: 100}); got != want {
			t.Errorf("%s: StateAt(t0) = %+v, want %+v", name, got, want)
		}
		for range 1000 {
			r.AdmitAt(t0)
		}
		if got, want := r.StateAt(t0).Balance, int64(300); got != want {
			t.Errorf("%s: balance after 1000 requests = %d, want %d (100 + 0.2·1000)", name, got, want)
		}
	}
}

// retries calls RetryAt at now until it is refused, and returns how many
// retries were granted.
func retries(r *Ratio, now time.Time) int {
	n := 0
	for r.RetryAt(now, CauseError) {
		n++
	}
	return n
}

// TestRatioReserve pins Finagle's reserve of minRetriesPerSec·ttl: with no
// requests, exactly 100 retries in a 10 s TTL, then none until they expire.
func TestRatioReserve(t *testing.T) {
	var r Ratio
	if got, want := retries(&r, t0), 100; got != want {
		t.Fatalf("retries granted with no requests = %d, want %d", got, want)
	}
	tests := []struct {
		after   time.Duration
		balance int64
	}{
		{0, 0},
		{time.Second, 0},
		{9*time.Second + 999*time.Millisecond, 0},
		{10 * time.Second, 100}, // the withdrawals' slice has expired
		{15 * time.Second, 100},
	}
	for _, tt := range tests {
		r := new(Ratio)
		retries(r, t0)
		if got := r.StateAt(at(tt.after)).Balance; got != tt.balance {
			t.Errorf("balance %v after spending the reserve = %d, want %d", tt.after, got, tt.balance)
		}
		if got, want := r.RetryAt(at(tt.after), CauseError), tt.balance > 0; got != want {
			t.Errorf("RetryAt %v after spending the reserve = %v, want %v", tt.after, got, want)
		}
	}
	// Spent a slice at a time: retries made at 0.5 s, 1.5 s, ... expire in
	// the same order.
	r = Ratio{}
	for i := range 10 {
		if got, want := retries(&r, at(time.Duration(i)*time.Second+500*time.Millisecond)), []int{100, 0, 0, 0, 0, 0, 0, 0, 0, 0}[i]; got != want {
			t.Errorf("retries granted at %d.5 s = %d, want %d", i, got, want)
		}
	}
	if got, want := retries(&r, at(10*time.Second+500*time.Millisecond)), 100; got != want {
		t.Errorf("retries granted at 10.5 s = %d, want %d", got, want)
	}
}

// TestRatioPercent pins percentCanRetry: each request deposits Percent of a
// retry, and deposits expire after the TTL.
func TestRatioPercent(t *testing.T) {
	tests := []struct {
		percent  float64
		requests int
		granted  int
	}{
		{0.2, 4, 0},
		{0.2, 5, 1},
		{0.2, 10, 2},
		{0.2, 14, 2},
		{0.5, 3, 1},
		{1, 7, 7},
		{2, 7, 14},
		{1e-7, 1000, 0}, // rounds to 0 at six decimal places
		{0.333333, 3, 0},
		{0.333334, 3, 1},
		{-1, 1000, 0},
	}
	for _, tt := range tests {
		r := NewRatio(RatioConfig{MinRetriesPerSec: -1, Percent: tt.percent})
		for range tt.requests {
			r.AdmitAt(t0)
		}
		if got := retries(r, t0); got != tt.granted {
			t.Errorf("Percent %v, %d requests: retries granted = %d, want %d", tt.percent, tt.requests, got, tt.granted)
		}
	}

	r := NewRatio(RatioConfig{MinRetriesPerSec: -1})
	for range 50 {
		r.AdmitAt(t0)
	}
	if got, want := r.StateAt(at(9*time.Second)).Balance, int64(10); got != want {
		t.Errorf("balance 9 s after 50 requests = %d, want %d", got, want)
	}
	if got, want := r.StateAt(at(10*time.Second)).Balance, int64(0); got != want {
		t.Errorf("balance 10 s after 50 requests = %d, want %d (deposits expired)", got, want)
	}
}

func TestRatioConfig(t *testing.T) {
	tests := []struct {
		cfg     RatioConfig
		reserve int64
	}{
		{RatioConfig{TTL: 1500 * time.Millisecond}, 15},
		{RatioConfig{TTL: time.Minute, MinRetriesPerSec: 3}, 180},
		{RatioConfig{TTL: -time.Second}, 100},
		{RatioConfig{TTL: time.Nanosecond}, 0},
		{RatioConfig{MinRetriesPerSec: -5}, 0},
		{RatioConfig{TTL: math.MaxInt64, MinRetriesPerSec: math.MaxInt}, maxReserve},
	}
	for _, tt := range tests {
		r := NewRatio(tt.cfg)
		if got := r.StateAt(t0).Reserve; got != tt.reserve {
			t.Errorf("NewRatio(%+v): reserve = %d, want %d", tt.cfg, got, tt.reserve)
		}
	}

	r := NewRatio(RatioConfig{MinRetriesPerSec: -1, Percent: -1})
	for range 100 {
		r.AdmitAt(t0)
	}
	if r.RetryAt(t0, CauseError) {
		t.Error("RetryAt with no reserve and no percent = true, want false")
	}
}

// TestRatioTime drives the window with time that goes backwards and jumps.
func TestRatioTime(t *testing.T) {
	tests := []struct {
		name    string
		then    time.Time // after spending the reserve at t0
		balance int64
	}{
		{"a little back", at(-5 * time.Second), 0},
		{"0.9 TTL back", at(-9 * time.Second), 0},
		{"just under a TTL back, across 10 slices", at(-10*time.Second + time.Nanosecond), 100},
		{"a TTL back", at(-10 * time.Second), 100}, // a clock step: start afresh
		{"far back", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), 100},
		{"far ahead", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), 100},
		{"beyond int64 nanoseconds", time.Unix(1<<62, 0), 100},
		{"before int64 nanoseconds", time.Unix(-1<<62, 0), 100},
	}
	for _, tt := range tests {
		var r Ratio
		retries(&r, t0)
		if got := r.StateAt(tt.then).Balance; got != tt.balance {
			t.Errorf("%s: balance = %d, want %d", tt.name, got, tt.balance)
		}
		// And back again: no panic, a sane balance.
		r.AdmitAt(t0)
		if got := r.StateAt(t0).Balance; got < 0 || got > 101 {
			t.Errorf("%s, then t0: balance = %d, want in [0, 101]", tt.name, got)
		}
	}
}

// TestRatioProperty checks the bound stated on Ratio: whenever a retry is
// granted at t, retries in (t − 0.9·TTL, t] ≤ reserve + Percent·requests in
// (t − TTL, t], with Percent at six decimal places.
func TestRatioProperty(t *testing.T) { fuzzgen.ForRandomInputs(t, 300, 3000, checkRatioProperty) }

func FuzzRatioProperty(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 3000)
	f.Fuzz(func(t *testing.T, data []byte) { checkRatioProperty(t, fuzzgen.New(data)) })
}

func checkRatioProperty(t testing.TB, g *fuzzgen.Gen) {
	ttl := time.Duration(g.IntRange(1, 20)) * time.Second
	minRetries := g.IntRange(-1, 5)
	percent := fuzzgen.Pick(g, -1, 0.05, 0.2, 0.333333, 0.5, 0.7, 1, 3)
	r := NewRatio(RatioConfig{TTL: ttl, MinRetriesPerSec: minRetries, Percent: percent})
	_, reserve, deposit := r.params()

	type event struct {
		t     time.Time
		retry bool
	}
	var log []event
	now := t0
	n := g.IntRange(1, 600)
	for i := range n {
		now = now.Add(time.Duration(g.Int64Range(0, int64(ttl/4))))
		if !g.Bool() {
			r.AdmitAt(now)
			log = append(log, event{now, false})
			continue
		}
		if !r.RetryAt(now, CauseError) {
			continue
		}
		log = append(log, event{now, true})
		var ret, req int64
		for _, e := range log {
			if e.retry && e.t.After(now.Add(-ttl*9/10)) {
				ret++
			}
			if !e.retry && e.t.After(now.Add(-ttl)) {
				req++
			}
		}
		if ret*retryUnits > reserve+deposit*req {
			t.Fatalf("step %d at %v: %d retries in the last 0.9·TTL, over reserve %d + %d·%d requests in the last TTL (units of 1e-6)",
				i, now.Sub(t0), ret, reserve/retryUnits, deposit, req)
		}
	}
}

// TestRatioAnyTime feeds arbitrary instants, backwards and far apart.
func TestRatioAnyTime(t *testing.T) { fuzzgen.ForRandomInputs(t, 300, 3000, checkRatioAnyTime) }

func FuzzRatioAnyTime(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 3000)
	f.Fuzz(func(t *testing.T, data []byte) { checkRatioAnyTime(t, fuzzgen.New(data)) })
}

func checkRatioAnyTime(t testing.TB, g *fuzzgen.Gen) {
	var r Ratio
	n := g.IntRange(1, 300)
	for range n {
		now := time.Unix(0, 0).Add(time.Duration(g.Int64Range(math.MinInt64, math.MaxInt64)))
		if g.Bool() {
			now = time.Unix(g.Int64Range(-1<<62, 1<<62), 0)
		}
		switch g.IntRange(0, 2) {
		case 0:
			r.AdmitAt(now)
		case 1:
			r.RetryAt(now, CauseError)
		case 2:
			if s := r.StateAt(now); s.Balance < 0 || s.Requests < 0 || s.Retries < 0 {
				t.Fatalf("StateAt(%v) = %+v, want no negative count", now, s)
			}
		}
	}
}

func TestRatioConcurrent(t *testing.T) {
	var r Ratio
	var granted atomic.Int64
	hammer(16, 20, func(g, i int) {
		if r.RetryAt(t0, CauseError) {
			granted.Add(1)
		}
	})
	if got, want := granted.Load(), int64(100); got != want {
		t.Errorf("retries granted by 16 goroutines with no requests = %d, want %d", got, want)
	}
	// Requests from 8 goroutines whose instants interleave out of order.
	hammer(8, 500, func(g, i int) {
		r.AdmitAt(at(time.Duration(i)*time.Millisecond - time.Duration(g)*time.Millisecond))
		r.RetryAt(at(time.Duration(i)*time.Millisecond), CauseError)
	})
	if s := r.StateAt(at(time.Second)); s.Requests != 4000 {
		t.Errorf("requests after 8×500 concurrent = %d, want 4000", s.Requests)
	}
}

func BenchmarkRatio(b *testing.B) {
	b.Run("admit", func(b *testing.B) {
		b.ReportAllocs()
		var r Ratio
		for b.Loop() {
			r.AdmitAt(t0)
		}
	})
	b.Run("admit-clock", func(b *testing.B) {
		b.ReportAllocs()
		var r Ratio
		for b.Loop() {
			r.AdmitAt(time.Time{})
		}
	})
	b.Run("admit-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var r Ratio
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.AdmitAt(t0)
			}
		})
	})
	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		var r Ratio
		for b.Loop() {
			r.RecordAt(time.Time{}, success)
		}
	})
	// Five requests and a retry: the default Percent pays for it exactly.
	b.Run("admit5-retry", func(b *testing.B) {
		b.ReportAllocs()
		r := NewRatio(RatioConfig{MinRetriesPerSec: -1})
		for b.Loop() {
			for range 5 {
				r.AdmitAt(t0)
			}
			if !r.RetryAt(t0, CauseError) {
				b.Fatal("retry refused")
			}
		}
	})
	b.Run("retry-refused", func(b *testing.B) {
		b.ReportAllocs()
		var r Ratio
		retries(&r, t0)
		for b.Loop() {
			r.RetryAt(t0, CauseError)
		}
	})
	b.Run("retry-refused-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var r Ratio
		retries(&r, t0)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.RetryAt(t0, CauseError)
			}
		})
	})
}

// TestRatioFarApart: from one end of time.Time's range to the other, the
// window starts afresh; the distance must not wrap into the newest slice.
func TestRatioFarApart(t *testing.T) {
	tests := []struct {
		name        string
		first, then time.Time
	}{
		{"before int64 nanoseconds, then beyond", time.Unix(-1<<62, 0), time.Unix(1<<62, 0)},
		{"beyond, then before", time.Unix(1<<62, 0), time.Unix(-1<<62, 0)},
	}
	for _, tt := range tests {
		r := NewRatio(RatioConfig{TTL: 10 * time.Nanosecond, MinRetriesPerSec: -1, Percent: 1})
		r.AdmitAt(tt.first)
		r.AdmitAt(tt.first)
		if got := r.StateAt(tt.first).Requests; got != 2 {
			t.Errorf("%s: requests at the first instant = %d, want 2", tt.name, got)
		}
		if got := r.StateAt(tt.then).Requests; got != 0 {
			t.Errorf("%s: requests at the other end = %d, want 0 (a fresh window)", tt.name, got)
		}
	}
}
