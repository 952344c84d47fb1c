package budget

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestShareDefaults(t *testing.T) {
	for name, s := range map[string]*Share{
		"zero value":  new(Share),
		"zero config": Must(NewShare(ShareConfig{})),
		"explicit":    Must(NewShare(ShareConfig{Percent: 0.2, Reserve: 10})),
	} {
		if got, want := s.State(), (ShareState{Retries: 10, Reserve: 10, Percent: 0.2}); got != want {
			t.Errorf("%s: State() = %+v, want %+v", name, got, want)
		}
	}
}

func TestShareConfig(t *testing.T) {
	tests := []struct {
		cfg           ShareConfig
		reserve, pct  float64
		retriesAtOnce int // retries granted from full, with no successes
		perSuccesses  int // successes that pay for one more retry once empty; 0: never
	}{
		{ShareConfig{}, 10, 0.2, 10, 5},
		{ShareConfig{Reserve: 3}, 3, 0.2, 3, 5},
		{ShareConfig{Reserve: 2.5}, 2.5, 0.2, 2, 3}, // 0.5 left over: 3 successes make 1.1
		{ShareConfig{Percent: 0.5}, 10, 0.5, 10, 2},
		{ShareConfig{Percent: 0.0001}, 10, 0.001, 10, 1000},
		{ShareConfig{Percent: -1}, 10, 0, 10, 0},
		{ShareConfig{Reserve: -1}, 1, 0.2, 1, 5}, // a paying budget holds at least one retry
		{ShareConfig{Reserve: -1, Percent: -1}, 0, 0, 0, 0},
		{ShareConfig{Percent: 1000}, 10, 1000, 10, 1},
	}
	for _, tt := range tests {
		s := Must(NewShare(tt.cfg))
		st := s.State()
		if st.Reserve != tt.reserve || st.Percent != tt.pct || st.Retries != tt.reserve {
			t.Errorf("NewShare(%+v).State() = %+v, want Reserve=Retries=%v Percent=%v", tt.cfg, st, tt.reserve, tt.pct)
		}
		n := 0
		for s.RetryAt(t0, CauseError) {
			n++
		}
		if n != tt.retriesAtOnce {
			t.Errorf("NewShare(%+v): %d retries from full, want %d", tt.cfg, n, tt.retriesAtOnce)
		}
		k := 0
		for k = 1; k <= 2000 && !s.RetryAt(t0, CauseError); k++ {
			s.RecordAt(t0, success)
		}
		if k > 2000 {
			k = 0
		}
		if k-1 != tt.perSuccesses && !(tt.perSuccesses == 0 && k == 0) {
			t.Errorf("NewShare(%+v): a retry after %d successes, want %d", tt.cfg, k-1, tt.perSuccesses)
		}
	}
}

func TestShareRefusesBadConfig(t *testing.T) {
	for _, c := range []ShareConfig{
		{Percent: math.NaN()}, {Percent: 1000.5}, {Percent: math.Inf(1)},
		{Reserve: math.NaN()}, {Reserve: 1 << 41}, {Reserve: math.Inf(1)},
	} {
		if _, err := NewShare(c); err == nil {
			t.Errorf("NewShare(%+v) = nil error, want one", c)
		}
	}
}

// TestShareOnlySuccessesPay pins what moves the balance: failures,
// overloads, permanent and ignored outcomes change nothing; a withdrawal
// refused changes nothing; RefundAt gives one back, never past full.
func TestShareOnlySuccessesPay(t *testing.T) {
	var s Share
	for _, r := range []Result{Failure, Overload, Permanent, Ignored} {
		s.RecordAt(t0, Outcome{Attempt: 1, Result: r})
	}
	if !s.Full() {
		t.Fatalf("after non-successes: State() = %+v, want full", s.State())
	}
	for range 10 {
		s.RetryAt(t0, CauseTimeout)
	}
	if s.RetryAt(t0, CauseThrottle) || s.State().Retries != 0 {
		t.Fatalf("empty budget granted a retry or went below zero: %+v", s.State())
	}
	s.RefundAt(t0, CauseError, 1)
	if got := s.State().Retries; got != 1 {
		t.Errorf("after RefundAt on empty: %v retries, want 1", got)
	}
	for range 100 {
		s.RefundAt(t0, CauseError, 1)
		s.RecordAt(t0, success)
	}
	if !s.Full() || s.State().Retries != 10 {
		t.Errorf("after many refunds and successes: %+v, want full at 10", s.State())
	}
}

// TestShareBound checks the stated bound on random sequences: over every
// run, retries granted ≤ Reserve + Percent·successes, and while failures
// are rare enough that successes pay for them, every retry is granted.
func TestShareBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range []float64{0, 0.05, 0.1, 0.15, 0.3, 0.5, 0.7, 0.9, 1} {
		var s Share
		var granted, wanted, successes int
		for call := 0; call < 20000; call++ {
			for attempt := 1; attempt <= 3; attempt++ {
				if attempt > 1 {
					wanted++
					if !s.RetryAt(t0, CauseError) {
						break
					}
					granted++
				}
				if rng.Float64() >= f {
					successes++
					s.RecordAt(t0, Outcome{Attempt: attempt, Result: Success})
					break
				}
				s.RecordAt(t0, Outcome{Attempt: attempt, Result: Failure})
			}
		}
		if bound := 10 + 0.2*float64(successes); float64(granted) > bound+1e-9 {
			t.Errorf("f=%v: %d retries granted, above the bound %.1f", f, granted, bound)
		}
		if f <= 0.1 && granted != wanted {
			t.Errorf("f=%v: %d of %d retries granted, want all (successes pay for them)", f, granted, wanted)
		}
		if f == 1 && granted != 10 {
			t.Errorf("f=1: %d retries granted, want the reserve, 10", granted)
		}
	}
}

// TestShareConcurrent runs withdrawals, deposits and refunds from many
// goroutines (under -race) and checks the balance stays in [0, Reserve]
// and the bound holds.
func TestShareConcurrent(t *testing.T) {
	var s Share
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted, successes := 0, 0
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, paid := 0, 0
			for i := range 2000 {
				if (i+g)%3 == 0 {
					s.RecordAt(t0, success)
					paid++
				} else if s.RetryAt(t0, CauseError) {
					ok++
				}
			}
			mu.Lock()
			granted += ok
			successes += paid
			mu.Unlock()
		}()
	}
	wg.Wait()
	if st := s.State(); st.Retries < 0 || st.Retries > 10 {
		t.Errorf("State() = %+v, want Retries in [0, 10]", st)
	}
	if bound := 10 + 0.2*float64(successes); float64(granted) > bound+1e-9 {
		t.Errorf("%d retries granted, above the bound %.1f", granted, bound)
	}
}

func TestShareShorthands(t *testing.T) {
	var s Share
	if !s.Admit() || !s.Retry(CauseError) {
		t.Fatal("Admit or Retry refused on a full budget")
	}
	s.Record(success)
	if got := s.State().Retries; got != 9.2 {
		t.Errorf("after a retry and a success: %v retries, want 9.2", got)
	}
}
