package breaker

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentWalk hammers one breaker from many goroutines with a mix of
// outcomes and a shared advancing (explicit) clock, so it goes round its
// states many times; the hook must still see one legal, unbroken walk.
func TestConcurrentWalk(t *testing.T) {
	r := &recorder{}
	b := Must(New(Settings{
		ConsecutiveFailures: 3,
		FailureRate:         0.5,
		Window:              time.Second,
		MinRequests:         10,
		OpenDuration:        20 * time.Millisecond,
		MaxProbes:           2,
		SuccessThreshold:    2,
		OnStateChange:       r.hook,
	}))
	var tick atomic.Int64
	const goroutines, iterations = 8, 3000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range iterations {
				now := t0.Add(time.Duration(tick.Add(1)) * 50 * time.Microsecond)
				switch rng.IntN(20) {
				case 0:
					b.StateAt(now)
				case 1:
					b.CountsAt(now)
				}
				if !b.AllowAt(now) {
					continue
				}
				o := Success
				switch p := rng.IntN(10); {
				case p < 4:
					o = Failure
				case p < 5:
					o = Ignored
				}
				b.RecordAt(now, o)
			}
		})
	}
	wg.Wait()
	changes := r.get()
	checkWalk(t, changes, b.StateAt(t0)) // t0 is before every open end: no change
	if len(changes) < 10 {
		t.Errorf("only %d state changes; the test should cycle the breaker", len(changes))
	}
	if b.probes > b.probeLimit() {
		t.Errorf("probes out = %d, more than %d", b.probes, b.probeLimit())
	}
}

// TestConcurrentSingleTrip: many goroutines failing at once trip the
// breaker exactly once.
func TestConcurrentSingleTrip(t *testing.T) {
	for range 20 {
		r := &recorder{}
		b := Must(New(Settings{OnStateChange: r.hook}))
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					if b.AllowAt(t0) {
						b.RecordAt(t0, Failure)
					}
				}
			})
		}
		wg.Wait()
		checkChanges(t, r.get(), []change{{Closed, Open, t0}})
	}
}

// TestConcurrentProbeBound: of many goroutines asking a half-open breaker
// at the same instant, exactly MaxProbes are admitted.
func TestConcurrentProbeBound(t *testing.T) {
	const maxProbes, goroutines = 3, 16
	b := halfOpen(t, Settings{MaxProbes: maxProbes, SuccessThreshold: 1000})
	now := at(time.Second)
	for round := range 20 {
		var admitted atomic.Int32
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				<-start
				if b.AllowAt(now) {
					admitted.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if got := admitted.Load(); got != maxProbes {
			t.Fatalf("round %d: admitted %d probes, want %d", round, got, maxProbes)
		}
		for range maxProbes {
			b.RecordAt(now, Ignored)
		}
	}
}

// TestConcurrentHealthy: a healthy breaker used from many goroutines never
// changes state and never calls its hook.
func TestConcurrentHealthy(t *testing.T) {
	r := &recorder{}
	b := Must(New(Settings{OnStateChange: r.hook}))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10000 {
				if b.Allow() {
					b.Record(Success)
				}
			}
		})
	}
	wg.Wait()
	if got := r.get(); len(got) != 0 {
		t.Errorf("hook calls = %v, want none", got)
	}
}
