package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	retrygo "github.com/avast/retry-go/v4"
	cbackoff "github.com/cenkalti/backoff/v5"
	"github.com/eapache/go-resiliency/retrier"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	sretry "github.com/sethvargo/go-retry"
)

// The benchmarks below compare one retry loop per library around the same
// operation. Every library makes the same op invocations: okOp once per call
// in BenchmarkHappyPath, flakyOp three times per call (fail, fail, succeed) in
// BenchmarkTwoFailures. Each sub-benchmark checks every call's error and, at
// the end, that op ran exactly as often as it should, so no library can skip
// work.
//
// Peers are given every advantage the library allows: whatever can be built
// once (a policy, an executor with the context bound, an option slice, the
// adapter closure a signature without ctx needs) is built outside the loop,
// and every peer gets its cheapest configuration: 3 attempts and a zero
// delay, in both benchmarks. recoil's happy path uses the zero Policy, with
// its default full-jitter schedule and its default retry budget, which no
// peer has; recoil-nobudget is the same Policy without the budget. In real
// code, where the context and the closure differ per request, failsafe-go's
// WithContext, retry-go's Context(ctx) option and the adapter closures cost
// extra allocations per call that these figures leave out.

// errFail is the one failure every op returns, allocated once.
var errFail = errors.New("bench: transient failure")

// calls counts op invocations in the running sub-benchmark.
var calls int

//go:noinline
func succeed(context.Context) error {
	calls++
	return nil
}

//go:noinline
func failTwice(context.Context) error {
	calls++
	if calls%3 != 0 {
		return errFail
	}
	return nil
}

// The ops are called through package-level variables, so the compiler can
// neither inline nor devirtualize them, in the bare loop or anywhere else.
var (
	okOp    = succeed
	flakyOp = failTwice
)

// start resets the op counter and turns on allocation reporting.
func start(b *testing.B) {
	b.Helper()
	calls = 0
	b.ReportAllocs()
}

// check fails b unless op ran perCall times for each of the b.N calls.
func check(b *testing.B, perCall int) {
	b.Helper()
	if want := perCall * b.N; calls != want {
		b.Fatalf("op ran %d times in %d calls, want %d", calls, b.N, want)
	}
}

// zeroSethvargo is a zero-delay go-retry backoff: retry.NewConstant panics on
// a zero duration. It is stateless, so one serves every call.
var zeroSethvargo = sretry.BackoffFunc(func() (time.Duration, bool) { return 0, false })

// retryableSethvargo adapts op for go-retry, which retries only errors
// wrapped in retry.RetryableError (one allocation per failure, as its README
// shows).
func retryableSethvargo(op func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := op(ctx); err != nil {
			return sretry.RetryableError(err)
		}
		return nil
	}
}

func BenchmarkHappyPath(b *testing.B) {
	ctx := context.Background()

	b.Run("bare", func(b *testing.B) {
		start(b)
		for b.Loop() {
			if err := okOp(ctx); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})

	b.Run("recoil", func(b *testing.B) {
		p := &recoil.Policy{}
		start(b)
		for b.Loop() {
			if err := recoil.Do(ctx, p, okOp); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})

	b.Run("recoil-nobudget", func(b *testing.B) {
		// The zero Policy less its budget, to measure what the budget
		// costs the happy path.
		p := &recoil.Policy{Budget: recoil.NoBudget}
		start(b)
		for b.Loop() {
			if err := recoil.Do(ctx, p, okOp); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})

	b.Run("failsafe-go", func(b *testing.B) {
		rp := retrypolicy.NewBuilder[any]().WithMaxAttempts(3).Build()
		exec := failsafe.With[any](rp).WithContext(ctx)
		fn := func() error { return okOp(ctx) }
		start(b)
		for b.Loop() {
			if err := exec.Run(fn); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})

	b.Run("cenkalti-backoff", func(b *testing.B) {
		// ZeroBackOff is stateless, so one value may serve every call;
		// Retry still builds its options, a default ExponentialBackOff
		// and a timer on every call.
		opts := []cbackoff.RetryOption{cbackoff.WithBackOff(&cbackoff.ZeroBackOff{}), cbackoff.WithMaxTries(3)}
		fn := func() (struct{}, error) { return struct{}{}, okOp(ctx) }
		start(b)
		for b.Loop() {
			if _, err := cbackoff.Retry(ctx, fn, opts...); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})

	b.Run("retry-go", func(b *testing.B) {
		// Options are built once; Do applies them to a new Config per call.
		opts := []retrygo.Option{retrygo.Attempts(3), retrygo.Delay(0), retrygo.DelayType(retrygo.FixedDelay), retrygo.Context(ctx)}
		fn := func() error { return okOp(ctx) }
		start(b)
		for b.Loop() {
			if err := retrygo.Do(fn, opts...); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})

	b.Run("sethvargo-retry", func(b *testing.B) {
		fn := retryableSethvargo(okOp)
		start(b)
		for b.Loop() {
			// WithMaxRetries counts attempts in its closure and never
			// resets: the library forces one per call, as its README does.
			if err := sretry.Do(ctx, sretry.WithMaxRetries(2, zeroSethvargo), fn); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})

	b.Run("eapache-retrier", func(b *testing.B) {
		r := retrier.New(retrier.ConstantBackoff(2, 0), nil)
		start(b)
		for b.Loop() {
			if err := r.RunCtx(ctx, okOp); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 1)
	})
}

func BenchmarkTwoFailures(b *testing.B) {
	ctx := context.Background()

	b.Run("bare", func(b *testing.B) {
		// A hand-written loop: three attempts, no wait.
		start(b)
		for b.Loop() {
			var err error
			for range 3 {
				if err = flakyOp(ctx); err == nil {
					break
				}
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		check(b, 3)
	})

	b.Run("recoil", func(b *testing.B) {
		// NoBudget, because no peer has a retry budget, and the zero
		// Policy's token bucket (gRFC A6, ratio 0.1) rightly refuses a
		// stream in which two attempts of every three fail.
		p := &recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget}
		start(b)
		for b.Loop() {
			if err := recoil.Do(ctx, p, flakyOp); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 3)
	})

	b.Run("failsafe-go", func(b *testing.B) {
		// The default delay is zero.
		rp := retrypolicy.NewBuilder[any]().WithMaxAttempts(3).Build()
		exec := failsafe.With[any](rp).WithContext(ctx)
		fn := func() error { return flakyOp(ctx) }
		start(b)
		for b.Loop() {
			if err := exec.Run(fn); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 3)
	})

	b.Run("cenkalti-backoff", func(b *testing.B) {
		opts := []cbackoff.RetryOption{cbackoff.WithBackOff(&cbackoff.ZeroBackOff{}), cbackoff.WithMaxTries(3)}
		fn := func() (struct{}, error) { return struct{}{}, flakyOp(ctx) }
		start(b)
		for b.Loop() {
			if _, err := cbackoff.Retry(ctx, fn, opts...); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 3)
	})

	b.Run("retry-go", func(b *testing.B) {
		// The default delay type adds up to 100 ms of random jitter;
		// FixedDelay with Delay(0) is its zero wait.
		opts := []retrygo.Option{retrygo.Attempts(3), retrygo.Delay(0), retrygo.DelayType(retrygo.FixedDelay), retrygo.Context(ctx)}
		fn := func() error { return flakyOp(ctx) }
		start(b)
		for b.Loop() {
			if err := retrygo.Do(fn, opts...); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 3)
	})

	b.Run("sethvargo-retry", func(b *testing.B) {
		fn := retryableSethvargo(flakyOp)
		start(b)
		for b.Loop() {
			// One WithMaxRetries per call, as above: it is stateful.
			if err := sretry.Do(ctx, sretry.WithMaxRetries(2, zeroSethvargo), fn); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 3)
	})

	b.Run("eapache-retrier", func(b *testing.B) {
		// Two retries, each after a zero wait; the default classifier
		// retries every error.
		r := retrier.New(retrier.ConstantBackoff(2, 0), nil)
		start(b)
		for b.Loop() {
			if err := r.RunCtx(ctx, flakyOp); err != nil {
				b.Fatal(err)
			}
		}
		check(b, 3)
	})
}
