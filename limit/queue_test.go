package limit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// priorityLimiter is what both limiters offer a caller that ranks its
// attempts.
type priorityLimiter interface {
	TryAcquire() bool
	AcquireAs(ctx context.Context, p Priority, retry bool) error
	Release()
	Stats() Stats
}

// TestPriorityQueue: with the queue full of background waiters, an
// interactive caller takes the newest background retry's place, and slots
// go to interactive waiters first, in the fixed Limiter as in Adaptive.
func TestPriorityQueue(t *testing.T) {
	for _, tt := range []struct {
		name string
		new  func() priorityLimiter
	}{
		{"Limiter", func() priorityLimiter { return Must(New(Config{Capacity: 1, MaxQueue: 2})) }},
		{"Adaptive", func() priorityLimiter {
			return Must(NewAdaptive(AdaptiveConfig{Initial: 1, Max: 1, MaxQueue: 2}))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkPriorityQueue(t, tt.new()) })
		})
	}
}

func checkPriorityQueue(t *testing.T, l priorityLimiter) {
	if !l.TryAcquire() {
		t.Fatal("first TryAcquire failed")
	}
	ctx := context.Background()
	var (
		mu    sync.Mutex
		order []string
		errs  = map[string]error{}
		wg    sync.WaitGroup
	)
	start := func(name string, p Priority, retry bool) {
		wg.Go(func() {
			err := l.AcquireAs(ctx, p, retry)
			mu.Lock()
			errs[name] = err
			if err == nil {
				order = append(order, name)
			}
			mu.Unlock()
			if err == nil {
				l.Release()
			}
		})
		synctest.Wait()
	}
	start("bg", Background, false)
	start("bg-retry", Background, true)
	start("interactive-retry", Interactive, true) // the queue is full: bg-retry is shed
	start("interactive", Interactive, false)      // ... and then bg
	start("bg-late", Background, true)            // worse than everyone queued: shed at once
	if l.TryAcquire() {
		t.Error("TryAcquire overtook the queue")
	}
	l.Release()
	wg.Wait()
	for name, want := range map[string]error{"bg": ErrFull, "bg-retry": ErrFull, "bg-late": ErrFull, "interactive": nil, "interactive-retry": nil} {
		if !errors.Is(errs[name], want) && errs[name] != want {
			t.Errorf("%s: %v, want %v", name, errs[name], want)
		}
	}
	if len(order) != 2 || order[0] != "interactive" || order[1] != "interactive-retry" {
		t.Errorf("served %v, want interactive then interactive-retry", order)
	}
	if s := l.Stats(); s.Shed != 3 || s.InUse != 0 || s.Queued != 0 || s.Acquired != 3 || s.Waited != 2 {
		t.Errorf("Stats() = %+v, want 3 acquired (2 after waiting), 3 shed and nothing held", s)
	}
}

// TestLimiterPriorityOrder: waiters of every rank are served best rank
// first and FIFO within a rank.
func TestLimiterPriorityOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Must(New(Config{Capacity: 1, MaxQueue: 8}))
		l.TryAcquire()
		var (
			mu    sync.Mutex
			order []string
			wg    sync.WaitGroup
		)
		for _, w := range []struct {
			name  string
			p     Priority
			retry bool
		}{
			{"bg-retry", Background, true}, {"bg", Background, false},
			{"in-retry", Interactive, true}, {"in-1", Interactive, false},
			{"bg-2", Background, false}, {"in-2", Interactive, false},
		} {
			wg.Go(func() {
				if err := l.AcquireAs(context.Background(), w.p, w.retry); err != nil {
					t.Errorf("%s: %v", w.name, err)
					return
				}
				mu.Lock()
				order = append(order, w.name)
				mu.Unlock()
				l.Release()
			})
			synctest.Wait()
		}
		l.Release()
		wg.Wait()
		want := []string{"in-1", "in-2", "in-retry", "bg", "bg-2", "bg-retry"}
		if len(order) != len(want) {
			t.Fatalf("served %v, want %v", order, want)
		}
		for i := range want {
			if order[i] != want[i] {
				t.Fatalf("served %v, want %v", order, want)
			}
		}
	})
}

// lockQueue takes the adaptive limiter's queue lock, as a caller joining or
// leaving the queue does, and returns its unlock.
func lockQueue(a *Adaptive) (unlock func()) {
	a.qmu.Lock()
	return a.qmu.Unlock
}

// TestAdaptiveWindowClosesUnderQueueing: a sample past the window's end
// closes the window and moves the limit even while the queue's lock is
// held — as it is, briefly and often, whenever callers queue. When the
// window's close had to win the lock the queue holds (TryLock), such a
// window ran on, and under steady queueing windows overran for as long as
// the queue stayed busy.
func TestAdaptiveWindowClosesUnderQueueing(t *testing.T) {
	t0 := time.Unix(1_000, 0)
	tests := []struct {
		name     string
		overload bool
		want     int
	}{
		{"overload lowers the limit", true, 8}, // 10 × 0.8
		{"a busy window raises it", false, 13}, // 10 + ⌊√10⌋
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Must(NewAdaptive(AdaptiveConfig{Initial: 10, Max: 100, MaxQueue: 4, Window: time.Second}))
			for range 10 {
				a.TryAcquire()
			}
			a.ReleaseAt(t0, time.Millisecond, false) // opens the window, 10 in flight seen
			unlock := lockQueue(a)
			a.ReleaseAt(t0.Add(time.Second/2), time.Millisecond, tt.overload) // joins it
			a.ReleaseAt(t0.Add(2*time.Second), time.Millisecond, false)       // ends it, queue lock held
			unlock()
			if got := a.Limit(); got != tt.want {
				t.Errorf("Limit() after a window ended with the queue locked = %d, want %d", got, tt.want)
			}
		})
	}
}
