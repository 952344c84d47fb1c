package recoil_test

import (
	"context"
	"errors"
	"testing"

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
