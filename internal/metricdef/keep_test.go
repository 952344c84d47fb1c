package metricdef_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/metricdef"
	"github.com/recoil-go/recoil/limit"
)

// waits is an adapter's wrapper: it counts the waits Acquire records.
type waits struct {
	recoil.Limiter
	n *atomic.Int64
}

func (w waits) Acquire(ctx context.Context) error {
	err := w.Limiter.Acquire(ctx)
	w.n.Add(1)
	return err
}

// TestKeep: a limiter instrumented by an adapter is still what it was — an
// adaptive limiter still hears latencies and queues by priority, with its
// waits recorded; a fixed one still queues by priority, and is not timed,
// so the loop does not time its attempts.
func TestKeep(t *testing.T) {
	var n atomic.Int64
	wrap := func(l recoil.Limiter) recoil.Limiter { return waits{l, &n} }

	fixed := metricdef.Keep(limit.Must(limit.New(limit.Config{Capacity: 1})), wrap)
	if _, ok := fixed.(recoil.LatencyLimiter); ok {
		t.Error("a wrapped fixed limiter is a LatencyLimiter: the loop would time its attempts for nothing")
	}
	if _, ok := fixed.(recoil.PriorityLimiter); !ok {
		t.Error("a wrapped fixed limiter is not a PriorityLimiter: its queue would no longer order by priority")
	}

	// Overload through Do reaches the adaptive limiter under the wrapper.
	a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 10, Window: time.Nanosecond}))
	p := &recoil.Policy{Limiter: a, MaxAttempts: 1}
	metricdef.Instrument(p, nil, nil, wrap)
	if _, ok := p.Limiter.(waits); ok {
		t.Fatal("Instrument hid the adaptive limiter behind the wrapper")
	}
	overloaded := recoil.Mark(errors.New("529"), recoil.StatusVerdict(529))
	for range 3 {
		_ = recoil.Do(context.Background(), p, func(context.Context) error { return overloaded })
	}
	if a.Limit() >= 10 {
		t.Errorf("limit %d after overloaded attempts through the wrapper, want below 10", a.Limit())
	}

	// A wait through the wrapper is recorded and keeps its priority: an
	// interactive waiter takes the place of a background one.
	synctest.Test(t, func(t *testing.T) {
		n.Store(0)
		a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 1, Max: 1, MaxQueue: 1}))
		l := metricdef.Keep(a, wrap).(recoil.PriorityLimiter)
		a.TryAcquire()
		var wg sync.WaitGroup
		var bg, in error
		wg.Go(func() { bg = l.AcquireAs(context.Background(), recoil.PriorityBackground, true) })
		synctest.Wait()
		wg.Go(func() { in = l.AcquireAs(context.Background(), recoil.PriorityInteractive, false) })
		synctest.Wait()
		a.Release()
		wg.Wait()
		if !errors.Is(bg, limit.ErrFull) || in != nil || n.Load() != 2 {
			t.Errorf("background %v, interactive %v, %d waits recorded; want ErrFull, nil, 2", bg, in, n.Load())
		}
		l.(recoil.LatencyLimiter).ReleaseAt(time.Time{}, time.Millisecond, false)
	})
}
