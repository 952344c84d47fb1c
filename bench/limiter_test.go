package bench

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/limit"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// BenchmarkLimiter is the concurrency limiters of guards_test.go, whose
// comment says what each row measures.

// capacity is every limiter's size: more than the goroutines of any
// parallel run, so nobody waits or is refused.
const capacity = 64

// tryLimiter is recoil's Limiter and Group's non-blocking side, named as the
// retry loop's recoil.Limiter names the blocking one.
type tryLimiter interface {
	TryAcquire() bool
	Release()
}

// groupKey binds a limit.Group to one key.
type groupKey struct {
	g   *limit.Group
	key string
}

func (k groupKey) TryAcquire() bool                  { return k.g.TryAcquire(k.key) }
func (k groupKey) Acquire(ctx context.Context) error { return k.g.Acquire(ctx, k.key) }
func (k groupKey) Release()                          { k.g.Release(k.key) }

func BenchmarkLimiter(b *testing.B) {
	// A cancelable context, as callers pass: Acquire must watch it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	group := func() groupKey {
		// One key of a Group, with the whole capacity allowed to it.
		return groupKey{limit.Must(limit.NewGroup(limit.GroupConfig{Capacity: capacity, PerKey: capacity})), "/v1/" + "messages"}
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			b.Run("try", func(b *testing.B) {
				b.Run("recoil", func(b *testing.B) {
					tryRelease(b, m.parallel, opaque[tryLimiter](limit.Must(limit.New(limit.Config{Capacity: capacity}))))
				})
				b.Run("recoil-group", func(b *testing.B) {
					tryRelease(b, m.parallel, opaque[tryLimiter](group()))
				})
				b.Run("failsafe-go", func(b *testing.B) {
					bulkheadTry(b, m.parallel, bulkhead.New[any](capacity))
				})
				b.Run("x-sync-semaphore", func(b *testing.B) {
					semaphoreTry(b, m.parallel, semaphore.NewWeighted(capacity))
				})
				b.Run("x-time-rate", func(b *testing.B) {
					rateAllow(b, m.parallel, rate.NewLimiter(1e9, 1e9))
				})
				b.Run("floor", func(b *testing.B) { tryRelease(b, m.parallel, opaque[tryLimiter](&floor{})) })
			})
			b.Run("ctx", func(b *testing.B) {
				b.Run("recoil", func(b *testing.B) {
					acquireRelease(b, m.parallel, ctx, opaque[recoil.Limiter](limit.Must(limit.New(limit.Config{Capacity: capacity}))))
				})
				b.Run("recoil-group", func(b *testing.B) {
					acquireRelease(b, m.parallel, ctx, opaque[recoil.Limiter](group()))
				})
				b.Run("failsafe-go", func(b *testing.B) {
					bulkheadAcquire(b, m.parallel, ctx, bulkhead.New[any](capacity))
				})
				b.Run("x-sync-semaphore", func(b *testing.B) {
					semaphoreAcquire(b, m.parallel, ctx, semaphore.NewWeighted(capacity))
				})
				b.Run("floor", func(b *testing.B) { acquireRelease(b, m.parallel, ctx, opaque[recoil.Limiter](&floor{})) })
			})
		})
	}
}

func tryRelease(b *testing.B, parallel bool, l tryLimiter) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !l.TryAcquire() {
				b.Fatal("refused")
			}
			l.Release()
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !l.TryAcquire() {
				n++
				continue
			}
			l.Release()
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func acquireRelease(b *testing.B, parallel bool, ctx context.Context, l recoil.Limiter) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if err := l.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
			l.Release()
		}
		return
	}
	runParallel(b, func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Acquire(ctx); err != nil {
				b.Error(err)
				return
			}
			l.Release()
		}
	})
}

func bulkheadTry(b *testing.B, parallel bool, bh bulkhead.Bulkhead[any]) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !bh.TryAcquirePermit() {
				b.Fatal("refused")
			}
			bh.ReleasePermit()
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !bh.TryAcquirePermit() {
				n++
				continue
			}
			bh.ReleasePermit()
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func bulkheadAcquire(b *testing.B, parallel bool, ctx context.Context, bh bulkhead.Bulkhead[any]) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if err := bh.AcquirePermit(ctx); err != nil {
				b.Fatal(err)
			}
			bh.ReleasePermit()
		}
		return
	}
	runParallel(b, func(pb *testing.PB) {
		for pb.Next() {
			if err := bh.AcquirePermit(ctx); err != nil {
				b.Error(err)
				return
			}
			bh.ReleasePermit()
		}
	})
}

func semaphoreTry(b *testing.B, parallel bool, s *semaphore.Weighted) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !s.TryAcquire(1) {
				b.Fatal("refused")
			}
			s.Release(1)
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !s.TryAcquire(1) {
				n++
				continue
			}
			s.Release(1)
		}
		refused.Add(n)
	})
	report(b, &refused)
}

func semaphoreAcquire(b *testing.B, parallel bool, ctx context.Context, s *semaphore.Weighted) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if err := s.Acquire(ctx, 1); err != nil {
				b.Fatal(err)
			}
			s.Release(1)
		}
		return
	}
	runParallel(b, func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Acquire(ctx, 1); err != nil {
				b.Error(err)
				return
			}
			s.Release(1)
		}
	})
}
