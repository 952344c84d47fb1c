package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	fsbreaker "github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"
)

// The benchmarks below compare the guards around a call — a retry budget, a
// circuit breaker, a concurrency limiter — doing the same job in each
// library, on the healthy path, where a guard costs every call and refuses
// nothing:
//
//   - BenchmarkBudget/…/call: a first attempt is admitted and its success
//     recorded. recoil: AdmitAt then RecordAt(Success); failsafe-go's budget:
//     RecordExecution then ReleaseExecution, what its retry policy does
//     around every execution.
//   - BenchmarkBudget/…/retry: a retry is granted and its success recorded.
//     recoil: RetryAt then RecordAt(Success of attempt 2); failsafe-go:
//     TryAcquirePermit then ReleasePermit, the permit its retry policy holds
//     while a retry runs; x/time/rate: Allow, a rate limiter used as a
//     retry allowance, with nothing to record.
//   - BenchmarkBudget/…/refused: a retry refused by a budget spent before
//     the run (by failures recorded, retries granted, or for failsafe-go
//     three retries in flight): the path every retry takes in a retry
//     storm, and failsafe-go's in most of its parallel retry row at -cpu=8.
//   - BenchmarkBreaker: a closed breaker admits an attempt and records its
//     success. recoil: AllowAt then RecordAt(Success); failsafe-go:
//     TryAcquirePermit then RecordSuccess; gobreaker: Execute around a
//     function that succeeds, or the two-step breaker's Allow and done(nil).
//   - BenchmarkLimiter/…/try: a free slot is taken without waiting and given
//     back (TryAcquire and Release, or the peer's names for them);
//     BenchmarkLimiter/…/ctx: the same through the blocking call that takes a
//     context. x/time/rate's Allow is in the try table as the guard people
//     reach for, though a rate limiter has nothing to give back.
//
// Each table has a floor row, which is no guard: the same calls through
// the same interface, making only the writes a guard that counts what it
// holds cannot do without — one atomic add when a slot is taken or a retry
// charged, one when the slot is given back or the retry's success refunds
// it — and none for a first attempt, which a budget need not write for
// (see floor). With sync/atomic, whose every write is a locked instruction
// on amd64, no such guard costs less than its row with one goroutine
// (-cpu=1): a peer that costs less than three times the floor cannot be
// beaten threefold there.
//
// Each is run by one goroutine (sequential) and by RunParallel (parallel,
// run with -cpu=1,2,8). recoil's guards are called through the interfaces
// of package recoil, with a zero now, as its retry loop calls them, and
// behind opaque so the compiler can neither devirtualize nor inline them;
// failsafe-go's are interfaces anyway; gobreaker, x/sync and x/time/rate
// are called on their concrete types, as their users do. Every sequential
// benchmark fails if the guard refuses; a parallel one counts refusals in
// refused/op (failsafe-go's budget refuses retries once three run at once).

// none is the zero time: "now, if the guard needs it".
var none time.Time

//go:noinline
func opaque[T any](v T) T { return v }

// modes runs a guard benchmark by one goroutine and by RunParallel.
var modes = []struct {
	name     string
	parallel bool
}{{"sequential", false}, {"parallel", true}}

// runParallel is b.RunParallel, reporting also the process's CPU time
// (user and system) per operation as cpu-ns/op. On a machine other work
// shares, wall time per operation at -cpu=1 and -cpu=8 measures how the
// scheduler split the cores as much as the guard; the CPU time the run
// itself spent per operation does not depend on that, and still counts
// what contention costs: cache lines moving between cores, retried
// compare-and-swaps, goroutines parked and woken.
func runParallel(b *testing.B, body func(*testing.PB)) {
	start := cpuTime()
	b.RunParallel(body)
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// report records the refusals a parallel benchmark counted.
func report(b *testing.B, refused *atomic.Int64) {
	b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
}

// firstSuccess and retrySuccess are the outcomes recoil's loop records for
// a first attempt that succeeds and for a retry (after an ordinary failure)
// that succeeds.
var (
	firstSuccess = budget.Outcome{Attempt: 1, Result: budget.Success}
	retrySuccess = budget.Outcome{Attempt: 2, Result: budget.Success, After: budget.CauseError}
)

// floor is the floor row of BenchmarkBudget and BenchmarkLimiter: the
// least a guard can do on the healthy path. A retry is one atomic add and
// its successful outcome one more, the refund; a first attempt's admission
// and its success write nothing; a slot taken is an add and given back
// another, and a blocking Acquire looks at its context first, as every
// limiter here does. It never refuses. Its counter is one word on a cache
// line of its own: with one goroutine nothing else touches it, which makes
// the row a floor; with more, every goroutine writes it, so at -cpu=8 it
// is no floor for a guard whose goroutines write lines of their own.
type floor struct {
	_ [64]byte
	n atomic.Int64
	_ [64 - 8]byte
}

func (f *floor) AdmitAt(time.Time) bool               { return true }
func (f *floor) RetryAt(time.Time, budget.Cause) bool { f.n.Add(1); return true }
func (f *floor) TryAcquire() bool                     { f.n.Add(1); return true }
func (f *floor) Release()                             { f.n.Add(-1) }

func (f *floor) RecordAt(_ time.Time, o budget.Outcome) {
	if o.Attempt > 1 {
		f.n.Add(-1)
	}
}

func (f *floor) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.n.Add(1)
	return nil
}

// fsBudget is the part of failsafe-go's budget its retry policy calls: the
// methods exist on the type budget.New returns, outside its exported
// interface.
type fsBudget interface {
	RecordExecution()
	ReleaseExecution()
	TryAcquirePermit() bool
	ReleasePermit()
}

func BenchmarkBudget(b *testing.B) {
	// recoil's budgets, each with its defaults except Ratio in the retry
	// job: its default reserve (10 retries a second over a 10 s TTL) is
	// spent by the first 100 iterations, and with no first attempts to
	// deposit, every later retry would be refused. A reserve larger than any
	// run keeps the retries granted, on the same code path.
	recoilBudgets := []struct {
		name     string
		call     func() recoil.Budget
		forRetry func() recoil.Budget
	}{
		{"recoil-tokenbucket", func() recoil.Budget { return &budget.TokenBucket{} }, nil},
		{"recoil-ratio", func() recoil.Budget { return &budget.Ratio{} },
			func() recoil.Budget {
				return budget.Must(budget.NewRatio(budget.RatioConfig{MinRetriesPerSec: 1 << 30}))
			}},
		{"recoil-quota", func() recoil.Budget { return &budget.Quota{} }, nil},
		{"recoil-adaptive", func() recoil.Budget { return &budget.Adaptive{} }, nil},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			b.Run("call", func(b *testing.B) {
				for _, rb := range recoilBudgets {
					b.Run(rb.name, func(b *testing.B) { recoilBudgetCall(b, m.parallel, opaque(rb.call())) })
				}
				b.Run("failsafe-go", func(b *testing.B) {
					failsafeBudgetCall(b, m.parallel, fsbudget.New().(fsBudget))
				})
				b.Run("floor", func(b *testing.B) { recoilBudgetCall(b, m.parallel, opaque[recoil.Budget](&floor{})) })
			})
			b.Run("retry", func(b *testing.B) {
				for _, rb := range recoilBudgets {
					newBudget := rb.call
					if rb.forRetry != nil {
						newBudget = rb.forRetry
					}
					b.Run(rb.name, func(b *testing.B) { recoilBudgetRetry(b, m.parallel, opaque(newBudget())) })
				}
				b.Run("failsafe-go", func(b *testing.B) {
					failsafeBudgetRetry(b, m.parallel, fsbudget.New().(fsBudget))
				})
				b.Run("floor", func(b *testing.B) { recoilBudgetRetry(b, m.parallel, opaque[recoil.Budget](&floor{})) })
				b.Run("x-time-rate", func(b *testing.B) {
					// Finite, so Allow does its arithmetic, and never
					// reached in a run.
					rateAllow(b, m.parallel, rate.NewLimiter(1e9, 1e9))
				})
			})
			b.Run("refused", func(b *testing.B) { budgetRefused(b, m.parallel) })
		})
	}
}

// budgetRefused is BenchmarkBudget/…/refused: each budget spent first,
// then asked for a retry it refuses.
func budgetRefused(b *testing.B, parallel bool) {
	b.Run("recoil-tokenbucket", func(b *testing.B) {
		tb := &budget.TokenBucket{}
		for tb.State().RetryAllowed {
			tb.RecordAt(none, budget.Outcome{Attempt: 1, Result: budget.Failure})
		}
		recoilBudgetRefused(b, parallel, opaque[recoil.Budget](tb))
	})
	b.Run("recoil-quota", func(b *testing.B) {
		q := &budget.Quota{}
		for q.RetryAt(none, budget.CauseError) {
		}
		recoilBudgetRefused(b, parallel, opaque[recoil.Budget](q))
	})
	b.Run("failsafe-go", func(b *testing.B) {
		// Its default minimum concurrency, 3, in flight: a fourth is
		// refused while they make more than 20 % of the executions.
		fs := fsbudget.New().(fsBudget)
		for fs.TryAcquirePermit() {
		}
		failsafeBudgetRefused(b, parallel, fs)
	})
}

func recoilBudgetRefused(b *testing.B, parallel bool, bu recoil.Budget) {
	b.ReportAllocs()
	var granted atomic.Int64
	body := func(pb *testing.PB) {
		for pb.Next() {
			if bu.RetryAt(none, budget.CauseError) {
				granted.Add(1)
			}
		}
	}
	if !parallel {
		for b.Loop() {
			if bu.RetryAt(none, budget.CauseError) {
				b.Fatal("spent budget granted a retry")
			}
		}
		return
	}
	runParallel(b, body)
	if granted.Load() != 0 {
		b.Fatalf("spent budget granted %d retries", granted.Load())
	}
}

func failsafeBudgetRefused(b *testing.B, parallel bool, bu fsBudget) {
	b.ReportAllocs()
	var granted atomic.Int64
	body := func(pb *testing.PB) {
		for pb.Next() {
			if bu.TryAcquirePermit() {
				granted.Add(1)
			}
		}
	}
	if !parallel {
		for b.Loop() {
			if bu.TryAcquirePermit() {
				b.Fatal("spent budget granted a retry")
			}
		}
		return
	}
	runParallel(b, body)
	if granted.Load() != 0 {
		b.Fatalf("spent budget granted %d retries", granted.Load())
	}
}

func recoilBudgetCall(b *testing.B, parallel bool, bu recoil.Budget) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !bu.AdmitAt(none) {
				b.Fatal("first attempt refused")
			}
			bu.RecordAt(none, firstSuccess)
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !bu.AdmitAt(none) {
				n++
				continue
			}
			bu.RecordAt(none, firstSuccess)
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func recoilBudgetRetry(b *testing.B, parallel bool, bu recoil.Budget) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !bu.RetryAt(none, budget.CauseError) {
				b.Fatal("retry refused")
			}
			bu.RecordAt(none, retrySuccess)
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !bu.RetryAt(none, budget.CauseError) {
				n++
				continue
			}
			bu.RecordAt(none, retrySuccess)
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func failsafeBudgetCall(b *testing.B, parallel bool, bu fsBudget) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			bu.RecordExecution()
			bu.ReleaseExecution()
		}
		return
	}
	var refused atomic.Int64 // it never refuses a first attempt
	runParallel(b, func(pb *testing.PB) {
		for pb.Next() {
			bu.RecordExecution()
			bu.ReleaseExecution()
		}
	})
	report(b, &refused)
}

func failsafeBudgetRetry(b *testing.B, parallel bool, bu fsBudget) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !bu.TryAcquirePermit() {
				b.Fatal("retry refused")
			}
			bu.ReleasePermit()
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !bu.TryAcquirePermit() {
				n++
				continue
			}
			bu.ReleasePermit()
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func rateAllow(b *testing.B, parallel bool, l *rate.Limiter) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !l.Allow() {
				b.Fatal("refused")
			}
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !l.Allow() {
				n++
			}
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func BenchmarkBreaker(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			b.Run("recoil", func(b *testing.B) {
				// A fixed run of five failures, failsafe-go's and gobreaker's
				// defaults: no window, no clock while closed.
				recoilBreaker(b, m.parallel, opaque[recoil.Breaker](breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 5}))))
			})
			b.Run("recoil-default", func(b *testing.B) {
				// The zero Settings: 80 % of 50 outcomes, or a run scaled to
				// the volume, over a window that reads the clock.
				recoilBreaker(b, m.parallel, opaque[recoil.Breaker](breaker.Must(breaker.New(breaker.Settings{}))))
			})
			b.Run("recoil-rate", func(b *testing.B) {
				// With a failure-rate window, which reads the clock and
				// counts every outcome.
				recoilBreaker(b, m.parallel, opaque[recoil.Breaker](breaker.Must(breaker.New(breaker.Settings{FailureRate: 0.5}))))
			})
			b.Run("failsafe-go", func(b *testing.B) {
				// Count-based, five failures of the last five trip it.
				cb := fsbreaker.NewBuilder[any]().WithFailureThreshold(5).WithDelay(30 * time.Second).Build()
				failsafeBreaker(b, m.parallel, cb)
			})
			b.Run("failsafe-go-rate", func(b *testing.B) {
				// Time-based: 50 % of at least 20 executions in 10 s.
				cb := fsbreaker.NewBuilder[any]().WithFailureRateThreshold(0.5, 20, 10*time.Second).WithDelay(30 * time.Second).Build()
				failsafeBreaker(b, m.parallel, cb)
			})
			b.Run("gobreaker", func(b *testing.B) {
				// The zero Settings: more than five failures in a row
				// trip it. Execute calls a function that succeeds.
				gobreakerExecute(b, m.parallel, gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{Timeout: 30 * time.Second}))
			})
			b.Run("gobreaker-twostep", func(b *testing.B) {
				gobreakerTwoStep(b, m.parallel, gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{Timeout: 30 * time.Second}))
			})
		})
	}
}

func recoilBreaker(b *testing.B, parallel bool, br recoil.Breaker) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !br.AllowAt(none) {
				b.Fatal("closed breaker refused")
			}
			br.RecordAt(none, breaker.Success)
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !br.AllowAt(none) {
				n++
				continue
			}
			br.RecordAt(none, breaker.Success)
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func failsafeBreaker(b *testing.B, parallel bool, cb fsbreaker.CircuitBreaker[any]) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !cb.TryAcquirePermit() {
				b.Fatal("closed breaker refused")
			}
			cb.RecordSuccess()
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !cb.TryAcquirePermit() {
				n++
				continue
			}
			cb.RecordSuccess()
		}
		refused.Add(n)
	})
	report(b, &refused)
}

// succeedValue is the operation gobreaker's Execute runs.
var succeedValue = func() (struct{}, error) { return struct{}{}, nil }

func gobreakerExecute(b *testing.B, parallel bool, cb *gobreaker.CircuitBreaker[struct{}]) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if _, err := cb.Execute(succeedValue); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if _, err := cb.Execute(succeedValue); err != nil {
				n++
			}
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func gobreakerTwoStep(b *testing.B, parallel bool, cb *gobreaker.TwoStepCircuitBreaker[struct{}]) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			done, err := cb.Allow()
			if err != nil {
				b.Fatal(err)
			}
			done(nil)
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			done, err := cb.Allow()
			if err != nil {
				n++
				continue
			}
			done(nil)
		}
		refused.Add(n)
	})
	report(b, &refused)
}
