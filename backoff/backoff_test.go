package backoff_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/recoil-go/recoil/backoff"
)

const draws = 20000

// stats draws n delays for one retry number and returns min, max and mean.
func stats(s backoff.Schedule, retry int, prev time.Duration, seed uint64) (lo, hi time.Duration, mean float64) {
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	lo, hi = math.MaxInt64, math.MinInt64
	var sum float64
	for range draws {
		d := s.Delay(retry, prev, rnd)
		lo, hi = min(lo, d), max(hi, d)
		sum += float64(d)
	}
	return lo, hi, sum / draws
}

func TestScheduleBounds(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		s        backoff.Schedule
		retry    int
		prev     time.Duration
		min, max time.Duration // inclusive bounds every draw must respect
		mean     time.Duration // expected mean
		tol      float64       // relative tolerance on the mean
		spread   bool          // draws must actually vary across the range
	}{
		{"exponential r1", backoff.Exponential{Base: time.Second}, 1, 0, time.Second, time.Second, time.Second, 0, false},
		{"exponential r4", backoff.Exponential{Base: time.Second}, 4, 0, 8 * time.Second, 8 * time.Second, 8 * time.Second, 0, false},
		{"exponential capped", backoff.Exponential{Base: time.Second, Max: 5 * time.Second}, 4, 0, 5 * time.Second, 5 * time.Second, 5 * time.Second, 0, false},
		{"exponential x1.6", backoff.Exponential{Base: 100 * ms, Multiplier: 1.6}, 3, 0, 256 * ms, 256 * ms, 256 * ms, 0, false},
		{"full jitter r1", backoff.FullJitter{Base: 100 * ms}, 1, 0, 0, 100 * ms, 50 * ms, 0.02, true},
		{"full jitter r3", backoff.FullJitter{Base: 100 * ms}, 3, 0, 0, 400 * ms, 200 * ms, 0.02, true},
		{"full jitter capped", backoff.FullJitter{Base: 100 * ms, Max: time.Second}, 10, 0, 0, time.Second, 500 * ms, 0.02, true},
		{"equal jitter r2", backoff.EqualJitter{Base: 100 * ms}, 2, 0, 100 * ms, 200 * ms, 150 * ms, 0.01, true},
		{"equal jitter capped", backoff.EqualJitter{Base: 100 * ms, Max: 300 * ms}, 8, 0, 150 * ms, 300 * ms, 225 * ms, 0.01, true},
		{"decorrelated first", backoff.Decorrelated{Base: 100 * ms, Max: 10 * time.Second}, 1, 0, 100 * ms, 300 * ms, 200 * ms, 0.02, true},
		{"decorrelated from prev", backoff.Decorrelated{Base: 100 * ms, Max: 10 * time.Second}, 5, time.Second, 100 * ms, 3 * time.Second, 1550 * ms, 0.02, true},
		{"decorrelated capped", backoff.Decorrelated{Base: 100 * ms, Max: time.Second}, 5, 5 * time.Second, 100 * ms, time.Second, 550 * ms, 0.02, true},
		{"proportional grpc r1", backoff.GRPC(), 1, 0, 800 * ms, 1200 * ms, time.Second, 0.01, true},
		{"proportional grpc r3", backoff.GRPC(), 3, 0, 2048 * ms, 3072 * ms, 2560 * ms, 0.01, true},
		{"proportional grpc at cap", backoff.GRPC(), 40, 0, 96 * time.Second, 144 * time.Second, 120 * time.Second, 0.01, true},
		{"proportional half jitter", backoff.Proportional{Base: time.Second, Jitter: 0.5, Max: 8 * time.Second}, 2, 0, time.Second, 3 * time.Second, 2 * time.Second, 0.02, true},
		{"constant", backoff.Constant(250 * ms), 7, 0, 250 * ms, 250 * ms, 250 * ms, 0, false},
		{"none", backoff.None{}, 3, 0, 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, mean := stats(tt.s, tt.retry, tt.prev, 1)
			if lo < tt.min || hi > tt.max {
				t.Errorf("Delay(%d) ranged over [%v, %v], want within [%v, %v]", tt.retry, lo, hi, tt.min, tt.max)
			}
			want := float64(tt.mean)
			if math.Abs(mean-want) > tt.tol*want+1 {
				t.Errorf("Delay(%d) mean = %v, want %v ± %.0f%%", tt.retry, time.Duration(mean), tt.mean, tt.tol*100)
			}
			if tt.spread {
				// Over 20,000 draws the extremes come within 1% of the range's ends.
				width := float64(tt.max - tt.min)
				if float64(lo-tt.min) > width/100 || float64(tt.max-hi) > width/100 {
					t.Errorf("Delay(%d) ranged over [%v, %v], want close to [%v, %v]", tt.retry, lo, hi, tt.min, tt.max)
				}
			}
		})
	}
}

// The hand-written wrapper: five attempts doubling from one second sleep
// 1 + 2 + 4 + 8 = 15 seconds.
func TestWrapperSchedule(t *testing.T) {
	s := backoff.Exponential{Base: time.Second}
	var total time.Duration
	for retry := 1; retry <= 4; retry++ {
		total += s.Delay(retry, 0, nil)
	}
	if total != 15*time.Second {
		t.Errorf("sum of Delay(1..4) = %v, want 15s", total)
	}
	// The last delay is larger than every earlier one added together.
	if last := s.Delay(4, 0, nil); last <= total-last {
		t.Errorf("Delay(4) = %v, want more than the rest (%v)", last, total-last)
	}
}

// No schedule overflows or goes negative, however large the retry number or
// the inputs.
func TestScheduleExtremes(t *testing.T) {
	huge := time.Duration(math.MaxInt64)
	schedules := []backoff.Schedule{
		backoff.Exponential{Base: time.Second},
		backoff.Exponential{Base: huge, Multiplier: 3},
		backoff.FullJitter{Base: time.Second},
		backoff.EqualJitter{Base: huge},
		backoff.Decorrelated{Base: time.Second},
		backoff.Decorrelated{Base: huge / 2},
		backoff.Proportional{Base: time.Second, Jitter: 1},
		backoff.Proportional{Base: huge, Jitter: 0.5},
		backoff.Proportional{Base: time.Second, Jitter: -3, Multiplier: 0.5},
		backoff.Constant(-time.Second),
		backoff.FullJitter{Base: -time.Second},
	}
	rnd := rand.New(rand.NewPCG(7, 7))
	for i, s := range schedules {
		for _, retry := range []int{-5, 0, 1, 2, 62, 63, 64, 1000, math.MaxInt} {
			for _, prev := range []time.Duration{-1, 0, time.Second, huge} {
				if d := s.Delay(retry, prev, rnd); d < 0 {
					t.Errorf("schedule %d %T: Delay(%d, %v) = %v, want >= 0", i, s, retry, prev, d)
				}
			}
		}
	}
}

func TestSeededDrawsRepeat(t *testing.T) {
	s := backoff.FullJitter{Base: 60 * time.Millisecond}
	a := rand.New(rand.NewPCG(4, 4))
	b := rand.New(rand.NewPCG(4, 4))
	for retry := 1; retry <= 6; retry++ {
		if x, y := s.Delay(retry, 0, a), s.Delay(retry, 0, b); x != y {
			t.Fatalf("Delay(%d) = %v and %v from the same seed, want equal", retry, x, y)
		}
	}
}

func BenchmarkDelay(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    backoff.Schedule
	}{
		{"full-jitter", backoff.FullJitter{Base: 100 * time.Millisecond, Max: 20 * time.Second}},
		{"decorrelated", backoff.Decorrelated{Base: 100 * time.Millisecond, Max: 20 * time.Second}},
		{"grpc", backoff.GRPC()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var d time.Duration
			for b.Loop() {
				d = bc.s.Delay(3, d, nil)
			}
		})
	}
}
