package budget

import (
	"sync"
	"testing"
	"time"
)

// budgetAPI mirrors recoil.Budget, which this package cannot import.
type budgetAPI interface {
	AdmitAt(now time.Time) bool
	RetryAt(now time.Time, c Cause) bool
	RecordAt(now time.Time, o Outcome)
}

var (
	_ budgetAPI = (*TokenBucket)(nil)
	_ budgetAPI = (*Ratio)(nil)
	_ budgetAPI = (*Quota)(nil)
	_ budgetAPI = (*Adaptive)(nil)
)

// t0 is the instant tests start from. It carries no monotonic reading.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// Results of each kind, for Record calls.
var (
	success   = Outcome{Attempt: 1, Result: Success}
	failure   = Outcome{Attempt: 1, Result: Failure}
	overload  = Outcome{Attempt: 1, Result: Overload}
	permanent = Outcome{Attempt: 1, Result: Permanent}
	ignored   = Outcome{Attempt: 1, Result: Ignored}
)

// hammer runs f(g, i) for g in [0, goroutines) and i in [0, n) with all
// goroutines started together, and waits for them.
func hammer(goroutines, n int, f func(g, i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	for g := range goroutines {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			for i := range n {
				f(g, i)
			}
		}()
	}
	start.Done()
	done.Wait()
}

// TestZeroTimeMeansNow checks the shorthands and the zero-time convention
// for the budgets that read the clock: zero-time calls land in the current
// window, not at the zero instant.
func TestZeroTimeMeansNow(t *testing.T) {
	var r Ratio
	r.Admit()
	if got, want := r.StateAt(time.Now()).Requests, int64(1); got != want {
		t.Errorf("Ratio: requests after Admit() = %d, want %d", got, want)
	}
	var a Adaptive
	a.Admit()
	a.Record(success)
	if got, want := a.StateAt(time.Now()), (AdaptiveState{Requests: 1, Accepts: 1}); got != want {
		t.Errorf("Adaptive: state after Admit(), Record() = %+v, want %+v", got, want)
	}
}
