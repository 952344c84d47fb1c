package tally

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// brutePeak is the reference: the most events whose millisecond lies in
// [t, t+span) for any t, found by trying every event as the start.
func brutePeak(ms []int64, span int64) (peak int64, start int64) {
	for _, t := range ms {
		var n int64
		for _, u := range ms {
			if u >= t && u < t+span {
				n++
			}
		}
		if n > peak || (n == peak && t < start) {
			peak, start = n, t
		}
	}
	return peak, start
}

// arrivals returns n random instants (milliseconds, with sub-millisecond
// parts) within spread, in the order they are added: sorted, then each
// moved back by up to late milliseconds, as concurrent adders that read
// the clock before taking the lock would deliver them.
func arrivals(rnd *rand.Rand, n int, spread, late time.Duration) []time.Duration {
	at := make([]time.Duration, n)
	for i := range at {
		at[i] = time.Duration(rnd.Int64N(int64(spread)))
	}
	slices.Sort(at)
	if late > 0 {
		for i := range at {
			j := i + rnd.IntN(4)
			if j < n && at[j]-at[i] < late {
				at[i], at[j] = at[j], at[i]
			}
		}
	}
	at[0] = 0 // the first event is the epoch
	return at
}

func TestWindowPeakMatchesBruteForce(t *testing.T) {
	tests := []struct {
		name   string
		span   time.Duration
		n      int
		spread time.Duration
		late   time.Duration
	}{
		{"sparse", 200 * time.Millisecond, 50, 10 * time.Second, 0},
		{"dense", 200 * time.Millisecond, 2000, 2 * time.Second, 0},
		{"bursts", 200 * time.Millisecond, 500, 700 * time.Millisecond, 0},
		{"late by up to 5ms", 200 * time.Millisecond, 1500, 3 * time.Second, 5 * time.Millisecond},
		{"late by up to 300ms", 200 * time.Millisecond, 800, 4 * time.Second, 300 * time.Millisecond},
		{"one millisecond span", time.Millisecond, 1000, 500 * time.Millisecond, 0},
		{"span longer than the run", 5 * time.Second, 300, time.Second, 0},
		{"idle gaps past the ring", 50 * time.Millisecond, 200, 60 * time.Second, 0},
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range tests {
		for seed := uint64(1); seed <= 20; seed++ {
			rnd := rand.New(rand.NewPCG(seed, 7))
			at := arrivals(rnd, tt.n, tt.spread, tt.late)
			w := NewWindow(tt.span)
			ms := make([]int64, len(at))
			for i, d := range at {
				w.AddAt(base.Add(d))
				ms[i] = int64(d / time.Millisecond)
			}
			want, wantStart := brutePeak(ms, int64(tt.span/time.Millisecond))
			got, start := w.Peak()
			if got != want {
				t.Fatalf("%s, seed %d: Peak() = %d, want %d (brute force)", tt.name, seed, got, want)
			}
			// The span Peak reports holds the peak, and no earlier one does.
			if n, _ := brutePeak(filter(ms, int64(start/time.Millisecond), int64(tt.span/time.Millisecond)), 1<<62); n != want {
				t.Fatalf("%s, seed %d: the span from %v holds %d events, want %d", tt.name, seed, start, n, want)
			}
			if start > time.Duration(wantStart)*time.Millisecond {
				t.Fatalf("%s, seed %d: peak span starts at %v, want at most %v", tt.name, seed, start, time.Duration(wantStart)*time.Millisecond)
			}
			if got, want := w.Total(), int64(tt.n); got != want {
				t.Fatalf("%s, seed %d: Total() = %d, want %d", tt.name, seed, got, want)
			}
		}
	}
}

// filter returns the instants in [from, from+span).
func filter(ms []int64, from, span int64) []int64 {
	var out []int64
	for _, t := range ms {
		if t >= from && t < from+span {
			out = append(out, t)
		}
	}
	return out
}

func TestWindowConcurrentMatchesBruteForce(t *testing.T) {
	// Many goroutines take instants of one run in turn and add them: the
	// lock decides the order, and an instant taken before another but
	// added after it is late, as on the gateway's HTTP path, where each
	// request reads the clock before it takes the lock.
	const goroutines, each = 8, 400
	rnd := rand.New(rand.NewPCG(3, 3))
	at := arrivals(rnd, goroutines*each, 3*time.Second, 0)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := NewWindow(200 * time.Millisecond)
	w.AddAt(base) // the epoch first, so every other instant is after it
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := next.Add(1); i < int64(len(at)); i = next.Add(1) {
				w.AddAt(base.Add(at[i]))
			}
		})
	}
	wg.Wait()
	ms := make([]int64, len(at))
	for i, d := range at {
		ms[i] = int64(d / time.Millisecond)
	}
	want, _ := brutePeak(ms, 200)
	if got, _ := w.Peak(); got != want {
		t.Errorf("Peak() = %d, want %d (brute force)", got, want)
	}
	if got, want := w.Total(), int64(len(at)); got != want {
		t.Errorf("Total() = %d, want %d", got, want)
	}
}

func TestWindowZeroValue(t *testing.T) {
	var w Window
	if got, want := w.Span(), DefaultWindow; got != want {
		t.Errorf("Span() = %v, want %v", got, want)
	}
	if n, at := w.Peak(); n != 0 || at != 0 {
		t.Errorf("Peak() = %d, %v before any event, want 0, 0", n, at)
	}
	base := time.Now()
	for _, d := range []time.Duration{0, 100 * time.Millisecond, 199 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond} {
		w.AddAt(base.Add(d))
	}
	// [0, 200ms) holds 3; [51ms, 251ms) is the first span to hold 4.
	if n, at := w.Peak(); n != 4 || at != 51*time.Millisecond {
		t.Errorf("Peak() = %d, %v, want 4, 51ms", n, at)
	}
	if got := w.First(); !got.Equal(base) {
		t.Errorf("First() = %v, want %v", got, base)
	}
}

func TestNewWindowSpan(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{0, DefaultWindow},
		{-time.Second, DefaultWindow},
		{time.Microsecond, time.Millisecond},
		{1500 * time.Microsecond, time.Millisecond},
		{time.Second, time.Second},
		{time.Hour, MaxWindow},
	}
	for _, tt := range tests {
		if got := NewWindow(tt.in).Span(); got != tt.want {
			t.Errorf("NewWindow(%v).Span() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestWindowSeries(t *testing.T) {
	w := NewBuckets(200)
	for _, b := range []int64{0, 10, 199, 200, 450, 10, 1000} {
		w.Add(b)
	}
	want := []int64{4, 1, 1, 0, 0, 1} // windows 0-199, 200-399, 400-599, ..., 1000-1199
	for n, c := range want {
		if got := w.SeriesAt(int64(n)); got != c {
			t.Errorf("SeriesAt(%d) = %d, want %d", n, got, c)
		}
	}
}

func TestWindowCoolFrom(t *testing.T) {
	tests := []struct {
		name   string
		events []int64
		below  int64
		want   int64
	}{
		// Four events at 0..3 in a 10-bucket span: the span ending at j
		// holds those in [j-9, j]; below 3 it must have dropped two.
		{"drop two", []int64{0, 1, 2, 3}, 3, 11},
		{"already below", []int64{0, 1}, 3, 1},
		{"below one", []int64{5, 5, 5}, 1, 15},
		{"never below zero", []int64{5}, 0, math.MaxInt64},
	}
	for _, tt := range tests {
		w := NewBuckets(10)
		for _, b := range tt.events {
			w.Add(b)
		}
		if got := w.CoolFrom(tt.below); got != tt.want {
			t.Errorf("%s: CoolFrom(%d) = %d, want %d", tt.name, tt.below, got, tt.want)
		}
	}
}
