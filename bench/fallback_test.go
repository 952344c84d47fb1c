package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/fallback"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/recoil-go/recoil"
)

// The benchmarks below compare recoil's Fallback and Hedge with failsafe-go's
// fallback and hedgepolicy packages on the same four paths:
//
//   - BenchmarkFallbackFirst: a call under a fallback that succeeds at once
//     on its first target (okOp once per call, the second op never). recoil:
//     DoTarget under a Fallback of two targets; failsafe-go: a fallback
//     policy whose function calls the second op. recoil-do is recoil's plain
//     Do on the zero Policy, which the first-target path must cost no more
//     than, with no allocation; bare-target calls recoil's op for DoTarget
//     directly, with the first target, so recoil less bare-target is what
//     DoTarget adds, as recoil-do less bare is what Do adds.
//   - BenchmarkFallbackMove: the first target fails permanently (a 404 with
//     Code "not_found") and the call goes to the second, which succeeds: the
//     first op and the second once each per call. recoil's Rule moves on
//     that code without cooling the target down, so every call moves, as the
//     root BenchmarkDoTargetMove does.
//   - BenchmarkHedgeIdle: a hedged call whose first attempt answers at once,
//     long before the hedge delay (a second): no hedge starts, okOp runs
//     once per call.
//   - BenchmarkHedgeFires: the first attempt hangs until its context is
//     cancelled, the hedge starts after the hedge delay and answers at once;
//     the hedge wins and the first attempt is cancelled. Each call makes
//     exactly two attempts, and the one that hangs sees its context
//     cancelled. It runs at two delays, 50µs and 1ns (hedgeDelays says
//     why).
//
// The conventions are retry_test.go's: the ops are //go:noinline functions
// called through package-level variables and count their calls, every
// error is checked, and each sub-benchmark fails at the end unless every op
// ran exactly as often as it should. failsafe-go's policies and executor,
// with the context bound, and every closure are built once, outside the
// loop. failsafe-go's fallback handles every error, its cheapest
// configuration (HandleErrors(errNotFound) would add an errors.Is per
// failure); recoil's reads the failure's verdict, as it must to tell a
// retired model from a 500. The hedge benchmarks hand the op its attempt's
// context in both libraries (failsafe-go's RunWithExecution and
// Execution.Context), since a hedged op that ignores it cannot be
// cancelled.
//
// Every benchmark here also reports cpu-ns/op, the process's CPU time per
// call: the work done, which neither a hedge delay's idle wait nor the
// queue for a CPU on a busy machine inflates (the runtime's own threads,
// woken and put to sleep around each wait, are in it). bare-hedge is the least a hedge can do by
// hand: each attempt in a goroutine under a context of its own, a timer for
// the delay, the first answer taken, the other attempt cancelled and waited
// for, with the channel and the timer reused across calls.

// errNotFound is the first target's failure in BenchmarkFallbackMove: an
// error marked with the verdict of an HTTP 404, Code "not_found", built once.
var errNotFound = recoil.Mark(errors.New("bench: model not found"), recoil.StatusVerdict(404))

// secondCalls counts the second target's op invocations in the running
// sub-benchmark; calls counts the first target's.
var secondCalls int

//go:noinline
func retired(context.Context) error {
	calls++
	return errNotFound
}

//go:noinline
func secondSucceed(context.Context) error {
	secondCalls++
	return nil
}

// The fallback ops, called through package-level variables as okOp is.
var (
	retiredOp = retired
	secondOp  = secondSucceed
)

// startTargets is start for the fallback benchmarks: both counters reset.
// It returns the process's CPU time, for checkTargets.
func startTargets(b *testing.B) (cpu int64) {
	b.Helper()
	secondCalls = 0
	start(b)
	return cpuTime()
}

// checkTargets reports the CPU time per call since cpu, and fails b unless
// the first target's op ran first times and the second's second times for
// each of the b.N calls.
func checkTargets(b *testing.B, cpu int64, first, second int) {
	b.Helper()
	cpuPerOp(b, cpu)
	check(b, first)
	if want := second * b.N; secondCalls != want {
		b.Fatalf("second op ran %d times in %d calls, want %d", secondCalls, b.N, want)
	}
}

// twoTargets is a Fallback of two targets under rule (nil: the default).
func twoTargets(rule recoil.FallbackRule) *recoil.Fallback {
	return &recoil.Fallback{Targets: []recoil.Target{{Name: "primary"}, {Name: "secondary"}}, Rule: rule}
}

// moveOnNotFound leaves a target that answered "not found" for the next
// without cooling it down, so that every call starts on the first target
// and moves.
func moveOnNotFound(v recoil.Verdict, _ time.Duration) recoil.Leave {
	return recoil.Leave{Move: v.Code == "not_found", Why: "model not found"}
}

// firstOrSecond is DoTarget's op under f: *first for f's first target,
// secondOp for any other. It tells them apart by address, the cheapest test
// there is, and reads the op variables at each call, as the other
// benchmarks' closures do.
func firstOrSecond(f *recoil.Fallback, first *func(context.Context) error) func(context.Context, *recoil.Target) error {
	primary := &f.Targets[0]
	return func(ctx context.Context, t *recoil.Target) error {
		if t == primary {
			return (*first)(ctx)
		}
		return secondOp(ctx)
	}
}

func BenchmarkFallbackFirst(b *testing.B) {
	ctx := context.Background()

	b.Run("bare", func(b *testing.B) {
		cpu := startTargets(b)
		for b.Loop() {
			if err := okOp(ctx); err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 0)
	})

	b.Run("bare-target", func(b *testing.B) {
		// recoil's op below, called directly with the first target.
		f := twoTargets(nil)
		op := firstOrSecond(f, &okOp)
		first := &f.Targets[0]
		cpu := startTargets(b)
		for b.Loop() {
			if err := op(ctx, first); err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 0)
	})

	b.Run("recoil-do", func(b *testing.B) {
		// Plain Do on the zero Policy, no Fallback: what the first-target
		// path must not exceed.
		p := &recoil.Policy{}
		cpu := startTargets(b)
		for b.Loop() {
			if err := recoil.Do(ctx, p, okOp); err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 0)
	})

	b.Run("recoil", func(b *testing.B) {
		// The zero Policy with a Fallback of two targets.
		p := &recoil.Policy{Fallback: twoTargets(nil)}
		op := firstOrSecond(p.Fallback, &okOp)
		cpu := startTargets(b)
		for b.Loop() {
			if err := recoil.DoTarget(ctx, p, op); err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 0)
	})

	b.Run("failsafe-go", func(b *testing.B) {
		fb := fallback.NewWithFunc[any](func(failsafe.Execution[any]) (any, error) { return nil, secondOp(ctx) })
		exec := failsafe.With[any](fb).WithContext(ctx)
		fn := func() error { return okOp(ctx) }
		cpu := startTargets(b)
		for b.Loop() {
			if err := exec.Run(fn); err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 0)
	})
}

func BenchmarkFallbackMove(b *testing.B) {
	ctx := context.Background()

	b.Run("bare", func(b *testing.B) {
		// By hand: the first op, and on its failure the second.
		cpu := startTargets(b)
		for b.Loop() {
			err := retiredOp(ctx)
			if err != nil {
				err = secondOp(ctx)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 1)
	})

	b.Run("recoil", func(b *testing.B) {
		// NoBudget, because failsafe-go's fallback has none, and the move
		// is an attempt the retry budget pays for: the default token
		// bucket (ratio 0.1) rightly refuses a stream in which every
		// call's first attempt fails.
		p := &recoil.Policy{Budget: recoil.NoBudget, Fallback: twoTargets(moveOnNotFound)}
		op := firstOrSecond(p.Fallback, &retiredOp)
		cpu := startTargets(b)
		for b.Loop() {
			if err := recoil.DoTarget(ctx, p, op); err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 1)
	})

	b.Run("failsafe-go", func(b *testing.B) {
		fb := fallback.NewWithFunc[any](func(failsafe.Execution[any]) (any, error) { return nil, secondOp(ctx) })
		exec := failsafe.With[any](fb).WithContext(ctx)
		fn := func() error { return retiredOp(ctx) }
		cpu := startTargets(b)
		for b.Loop() {
			if err := exec.Run(fn); err != nil {
				b.Fatal(err)
			}
		}
		checkTargets(b, cpu, 1, 1)
	})
}

// hedgeDelays are BenchmarkHedgeFires' hedge delays. At 50µs the caller
// parks on its timer and the first attempt's goroutine runs before the
// hedge starts, so the first attempt is the one that hangs (in all but
// about one call in a hundred on a busy machine: failsafe-go's
// Execution.IsHedge counted 17 of 2,000); but with every goroutine parked
// the runtime sleeps in epoll_wait, whose timeout is in milliseconds, so
// the hedge starts about 1 ms late and wall time measures that sleep. At
// 1ns the timer has expired when the caller first looks at it, so the
// hedge starts at once and nobody sleeps: the figures are the hedging's
// own work, but which of the two attempts starts first, and so hangs, is
// the scheduler's choice (the hedge, in 1,991 of 2,000 calls, as Go runs
// the goroutine started last first). Either way each library makes two
// attempts, cancels one and returns the other's answer.
var hedgeDelays = []struct {
	name  string
	delay time.Duration
}{{"delay-1ns", time.Nanosecond}, {"delay-50us", 50 * time.Microsecond}}

// attempts counts BenchmarkHedgeFires' attempts, and cancelled those that
// hung and saw their context cancelled: atomics, as two attempts run at
// once.
var attempts, cancelled atomic.Int64

// hangThenAnswer is BenchmarkHedgeFires' op. Of a call's two attempts, the
// first to start hangs until its context is cancelled and the second
// answers at once: whichever goroutine the scheduler runs first (on a busy
// machine the hedge's may start before the first attempt's), a call's
// attempts take one odd and one even number, and the call can only end
// with the even one's answer, after both have started.
//
//go:noinline
func hangThenAnswer(ctx context.Context) error {
	if attempts.Add(1)%2 == 1 {
		<-ctx.Done()
		cancelled.Add(1)
		return ctx.Err()
	}
	return nil
}

var hedgedOp = hangThenAnswer

// hedgeByHand is the least a hedge of op can do: the attempt in a goroutine
// under a context of its own, a timer for delay, and if the timer fires
// first a second attempt likewise; the first answer is taken, and the
// other attempt, if any, cancelled and waited for. results (buffered, 2)
// and timer (stopped) are the caller's, reused across calls.
func hedgeByHand(ctx context.Context, op func(context.Context) error, delay time.Duration, results chan error, timer *time.Timer) error {
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	go func() { results <- op(ctx1) }()
	timer.Reset(delay)
	select {
	case err := <-results:
		timer.Stop()
		return err
	case <-timer.C:
	}
	ctx2, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	go func() { results <- op(ctx2) }()
	err := <-results
	cancel1()
	cancel2()
	<-results
	return err
}

// newHedgeByHand returns hedgeByHand's channel and stopped timer.
func newHedgeByHand() (chan error, *time.Timer) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	return make(chan error, 2), timer
}

// cpuPerOp reports the process's CPU time since start (cpuTime's) per call.
func cpuPerOp(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkHedgeIdle(b *testing.B) {
	ctx := context.Background()

	b.Run("bare", func(b *testing.B) {
		// The op called directly: no hedging at all.
		start(b)
		cpu := cpuTime()
		for b.Loop() {
			if err := okOp(ctx); err != nil {
				b.Fatal(err)
			}
		}
		cpuPerOp(b, cpu)
		check(b, 1)
	})

	b.Run("bare-hedge", func(b *testing.B) {
		results, timer := newHedgeByHand()
		start(b)
		cpu := cpuTime()
		for b.Loop() {
			if err := hedgeByHand(ctx, okOp, time.Second, results, timer); err != nil {
				b.Fatal(err)
			}
		}
		cpuPerOp(b, cpu)
		check(b, 1)
	})

	b.Run("recoil", func(b *testing.B) {
		// The zero Policy with a Hedge; its budget is never asked, as no
		// hedge starts.
		p := &recoil.Policy{Hedge: &recoil.Hedge{Delay: time.Second}}
		start(b)
		cpu := cpuTime()
		for b.Loop() {
			if err := recoil.Do(ctx, p, okOp); err != nil {
				b.Fatal(err)
			}
		}
		cpuPerOp(b, cpu)
		check(b, 1)
	})

	b.Run("failsafe-go", func(b *testing.B) {
		hp := hedgepolicy.NewWithDelay[any](time.Second)
		exec := failsafe.With[any](hp).WithContext(ctx)
		fn := func(e failsafe.Execution[any]) error { return okOp(e.Context()) }
		start(b)
		cpu := cpuTime()
		for b.Loop() {
			if err := exec.RunWithExecution(fn); err != nil {
				b.Fatal(err)
			}
		}
		cpuPerOp(b, cpu)
		check(b, 1)
	})
}

func BenchmarkHedgeFires(b *testing.B) {
	ctx := context.Background()
	for _, d := range hedgeDelays {
		b.Run(d.name, func(b *testing.B) {
			b.Run("bare-hedge", func(b *testing.B) {
				results, timer := newHedgeByHand()
				hedgeFires(b, func() error { return hedgeByHand(ctx, hedgedOp, d.delay, results, timer) })
			})

			b.Run("recoil", func(b *testing.B) {
				// NoBudget: a hedge is paid from the retry budget, priced
				// as a retry after a timeout, and the default token bucket
				// (ratio 0.1) rightly refuses hedges once every call of a
				// long run has hedged; a refused hedge would leave the
				// first attempt hanging. failsafe-go's hedge policy has
				// no budget unless given one.
				p := &recoil.Policy{Hedge: &recoil.Hedge{Delay: d.delay}, Budget: recoil.NoBudget}
				hedgeFires(b, func() error { return recoil.Do(ctx, p, hedgedOp) })
			})

			b.Run("failsafe-go", func(b *testing.B) {
				hp := hedgepolicy.NewWithDelay[any](d.delay)
				exec := failsafe.With[any](hp).WithContext(ctx)
				fn := func(e failsafe.Execution[any]) error { return hedgedOp(e.Context()) }
				hedgeFires(b, func() error { return exec.RunWithExecution(fn) })
			})
		})
	}
}

// hedgeFires runs call b.N times and fails unless each made exactly two
// attempts of hedgedOp and the one that hung was cancelled. failsafe-go
// returns the winner's answer without waiting for the loser, so the
// cancelled attempts are waited for, up to a few seconds, outside the
// timed loop.
func hedgeFires(b *testing.B, call func() error) {
	b.Helper()
	attempts.Store(0)
	cancelled.Store(0)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	cpuPerOp(b, cpu)
	want := int64(b.N)
	for deadline := time.Now().Add(5 * time.Second); cancelled.Load() < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := attempts.Load(); n != 2*want {
		b.Fatalf("%d attempts in %d calls, want %d", n, b.N, 2*want)
	}
	if n := cancelled.Load(); n != want {
		b.Fatalf("%d attempts cancelled in %d calls, want %d", n, b.N, want)
	}
}
