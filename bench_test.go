package recoil_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

var errFlaky = errors.New("flaky")

// BenchmarkDoSuccess is the healthy path with the default budget on.
func BenchmarkDoSuccess(b *testing.B) {
	ctx := context.Background()
	p := &recoil.Policy{}
	op := func(context.Context) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := recoil.Do(ctx, p, op); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDoTwoFailures(b *testing.B) {
	ctx := context.Background()
	p := &recoil.Policy{Backoff: backoff.None{}, Budget: recoil.NoBudget}
	n := 0
	op := func(context.Context) error {
		n++
		if n%3 != 0 {
			return errFlaky
		}
		return nil
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := recoil.Do(ctx, p, op); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBare(b *testing.B) {
	ctx := context.Background()
	op := func(context.Context) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecide is the decision alone, with the default schedules: it
// allocates nothing.
func BenchmarkDecide(b *testing.B) {
	p := &recoil.Policy{Budget: recoil.NoBudget}
	f := recoil.Failure{Attempt: 1, Verdict: recoil.Verdict{Class: recoil.ClassTransient}}
	b.ReportAllocs()
	for b.Loop() {
		if d := p.Decide(f); !d.Retry {
			b.Fatal(d)
		}
	}
}

// BenchmarkDoTargetSuccess is a call under a Fallback of two targets that
// succeeds at once on the first: it must cost what BenchmarkDoSuccess
// costs, with no allocation.
func BenchmarkDoTargetSuccess(b *testing.B) {
	ctx := context.Background()
	p := &recoil.Policy{Fallback: &recoil.Fallback{Targets: []recoil.Target{{Name: "a"}, {Name: "b"}}}}
	op := func(context.Context, *recoil.Target) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := recoil.DoTarget(ctx, p, op); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDoTargetMove is a call that moves from a retired model to the
// next target: a failure, a move, a success.
func BenchmarkDoTargetMove(b *testing.B) {
	ctx := context.Background()
	retired := recoil.Mark(errFlaky, recoil.StatusVerdict(404))
	f := &recoil.Fallback{Targets: []recoil.Target{{Name: "a"}, {Name: "b"}}, Rule: func(v recoil.Verdict, _ time.Duration) recoil.Leave {
		return recoil.Leave{Move: v.Code == "not_found", Why: "model not found"} // no cool-down: every call moves
	}}
	p := &recoil.Policy{Budget: recoil.NoBudget, Fallback: f}
	op := func(_ context.Context, t *recoil.Target) error {
		if t.Name == "a" {
			return retired
		}
		return nil
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := recoil.DoTarget(ctx, p, op); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDoHedgedSuccess is a call under a Hedge that answers before the
// hedge delay: what racing costs when no race is needed (the attempt runs
// in a goroutine of its own).
func BenchmarkDoHedgedSuccess(b *testing.B) {
	ctx := context.Background()
	p := &recoil.Policy{Hedge: &recoil.Hedge{Delay: time.Second}}
	op := func(context.Context) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := recoil.Do(ctx, p, op); err != nil {
			b.Fatal(err)
		}
	}
}
