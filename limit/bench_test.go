package limit

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
)

// Benchmarks of the paths a call takes when it is not made to wait, and of
// shedding, which is the path taken under overload. The parallel forms use a
// Capacity large enough that no goroutine is ever refused, so they measure
// contention on the state word, not waiting.

func BenchmarkLimiterTryAcquireRelease(b *testing.B) {
	l := Must(New(Config{Capacity: 1}))
	b.ReportAllocs()
	for b.Loop() {
		if !l.TryAcquire() {
			b.Fatal("TryAcquire() = false")
		}
		l.Release()
	}
}

func BenchmarkLimiterTryAcquireReleaseParallel(b *testing.B) {
	l := Must(New(Config{Capacity: 1 << 20}))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !l.TryAcquire() {
				b.Fatal("TryAcquire() = false")
			}
			l.Release()
		}
	})
}

func BenchmarkLimiterAcquireRelease(b *testing.B) {
	l := Must(New(Config{Capacity: 1}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Acquire(ctx); err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
}

func BenchmarkLimiterAcquireReleaseParallel(b *testing.B) {
	l := Must(New(Config{Capacity: 1 << 20}))
	ctx, cancel := context.WithCancel(context.Background()) // a cancelable ctx, as callers pass
	defer cancel()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
			l.Release()
		}
	})
}

// BenchmarkLimiterAcquireWait has every goroutine contend for one slot, so
// most calls queue and are handed the slot by a Release: the slow path.
func BenchmarkLimiterAcquireWait(b *testing.B) {
	l := Must(New(Config{Capacity: 1, MaxQueue: 1 << 10}))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
			l.Release()
		}
	})
	b.ReportMetric(float64(l.Stats().Waited)/float64(b.N), "waited/op")
}

// BenchmarkLimiterShed measures refusing a call when the slots and queue are
// full: the path every call takes under overload.
func BenchmarkLimiterShed(b *testing.B) {
	l := Must(New(Config{Capacity: 1}))
	l.TryAcquire()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Acquire(ctx); !errors.Is(err, ErrFull) {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGroupTryAcquireRelease(b *testing.B) {
	g := Must(NewGroup(GroupConfig{Capacity: 2}))
	const key = "/v1/messages"
	b.ReportAllocs()
	for b.Loop() {
		if !g.TryAcquire(key) {
			b.Fatal("TryAcquire() = false")
		}
		g.Release(key)
	}
}

func BenchmarkGroupAcquireRelease(b *testing.B) {
	g := Must(NewGroup(GroupConfig{Capacity: 2}))
	ctx := context.Background()
	key := "/v1/" + strconv.Itoa(1) // not a constant, as in real use
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Acquire(ctx, key); err != nil {
			b.Fatal(err)
		}
		g.Release(key)
	}
}

// BenchmarkGroupAcquireReleaseParallel spreads goroutines over 8 keys.
func BenchmarkGroupAcquireReleaseParallel(b *testing.B) {
	g := Must(NewGroup(GroupConfig{Capacity: 1 << 20}))
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = "/v1/endpoint/" + strconv.Itoa(i)
	}
	ctx := context.Background()
	var next atomic.Uint32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		key := keys[next.Add(1)%uint32(len(keys))]
		for pb.Next() {
			if err := g.Acquire(ctx, key); err != nil {
				b.Fatal(err)
			}
			g.Release(key)
		}
	})
}
