package limit

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m)
}

var errCause = errors.New("test: caller gave up")

// mustPanic reports whether f panicked.
func mustPanic(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}

// cancelAfter cancels ctx with cause after d of the bubble's fake clock, from
// a goroutine the caller waits for with the returned function. It stands in
// for context.WithTimeout and time.AfterFunc, whose runtime-started timer
// goroutines make the race detector crash inside busy synctest bubbles on
// Go 1.26.8 (ThreadSanitizer CHECK failure or SIGSEGV; golang/go#78156
// reports the same CHECK failure).
func cancelAfter(d time.Duration, cancel context.CancelCauseFunc, cause error) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		<-time.After(d)
		cancel(cause)
	})
	return wg.Wait
}

// maxInt raises *m to v if v is larger.
func maxInt(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	tests := []struct {
		c     Config
		field string
	}{
		{Config{Capacity: -1}, "Config.Capacity"},
		{Config{Capacity: maxField + 1}, "Config.Capacity"},
		{Config{MaxQueue: -1}, "Config.MaxQueue"},
		{Config{MaxQueue: maxField + 1}, "Config.MaxQueue"},
		{Config{MaxWait: -time.Second}, "Config.MaxWait"},
	}
	for _, tt := range tests {
		l, err := New(tt.c)
		var ce *ConfigError
		if l != nil || !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("Must(New(%+v)) = %v, %v; want nil and a %s error wrapping ErrConfig", tt.c, l, err, tt.field)
		}
		if got := mustPanic(func() { Must(New(tt.c)) }); !got {
			t.Errorf("Must(New(%+v)) panicked = %v, want true", tt.c, got)
		}
	}
	if _, err := New(Config{Capacity: maxField, MaxQueue: maxField}); err != nil {
		t.Errorf("Must(New(maximal config)) = %v, want nil error", err)
	}
}

func TestTryAcquireHonoursCapacity(t *testing.T) {
	tests := []struct {
		c    Config
		want int
	}{
		{Config{}, DefaultCapacity},
		{Config{Capacity: 1}, 1},
		{Config{Capacity: 3, MaxQueue: 5}, 3},
		{Config{Capacity: 100}, 100},
	}
	for _, tt := range tests {
		l := Must(New(tt.c))
		got := 0
		for l.TryAcquire() {
			got++
			if got > tt.want+1 {
				break
			}
		}
		if got != tt.want {
			t.Errorf("%+v: TryAcquire succeeded %d times, want %d", tt.c, got, tt.want)
		}
		if got := l.InUse(); got != tt.want {
			t.Errorf("%+v: InUse() = %d, want %d", tt.c, got, tt.want)
		}
		l.Release()
		if got := l.TryAcquire(); !got {
			t.Errorf("%+v: TryAcquire() after Release = %v, want true", tt.c, got)
		}
		if got, want := l.Stats().Acquired, uint64(tt.want+1); got != want {
			t.Errorf("%+v: Stats().Acquired = %d, want %d", tt.c, got, want)
		}
	}
}

func TestAcquireDoneContext(t *testing.T) {
	l := Must(New(Config{Capacity: 1}))
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errCause)
	if err := l.Acquire(ctx); !errors.Is(err, errCause) {
		t.Errorf("Acquire(canceled ctx) = %v, want %v", err, errCause)
	}
	if got := l.InUse(); got != 0 {
		t.Errorf("InUse() = %d, want 0", got)
	}
}

func TestReleaseWithoutAcquirePanics(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*Limiter)
	}{
		{"fresh", func(*Limiter) {}},
		{"after a paired release", func(l *Limiter) { l.TryAcquire(); l.Release() }},
		{"one too many", func(l *Limiter) { l.TryAcquire(); l.TryAcquire(); l.Release(); l.Release() }},
	}
	for _, tt := range tests {
		l := Must(New(Config{Capacity: 2}))
		tt.setup(l)
		if got := mustPanic(l.Release); !got {
			t.Errorf("%s: Release() panicked = %v, want true", tt.name, got)
		}
		if got := l.InUse(); got != 0 {
			t.Errorf("%s: InUse() after panic = %d, want 0", tt.name, got)
		}
	}
}

// TestCapacityHonoured runs many goroutines through a small limiter and
// checks that no more than Capacity ever hold it at once.
func TestCapacityHonoured(t *testing.T) {
	const (
		capacity   = 4
		goroutines = 32
		iterations = 300
	)
	tests := []struct {
		name string
		try  func(i int) bool // whether iteration i uses TryAcquire
	}{
		{"Acquire", func(int) bool { return false }},
		{"TryAcquire", func(int) bool { return true }},
		{"mixed", func(i int) bool { return i%2 == 0 }},
	}
	for _, tt := range tests {
		l := Must(New(Config{Capacity: capacity, MaxQueue: goroutines}))
		var active, peak atomic.Int64
		var ok atomic.Uint64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for i := range iterations {
					if tt.try(i) {
						if !l.TryAcquire() {
							continue
						}
					} else if err := l.Acquire(context.Background()); err != nil {
						t.Errorf("%s: Acquire() = %v, want nil", tt.name, err)
						return
					}
					ok.Add(1)
					maxInt(&peak, active.Add(1))
					runtime.Gosched()
					active.Add(-1)
					l.Release()
				}
			})
		}
		wg.Wait()
		if got := peak.Load(); got > capacity {
			t.Errorf("%s: peak holders = %d, want <= %d", tt.name, got, capacity)
		}
		st := l.Stats()
		if st.InUse != 0 || st.Queued != 0 {
			t.Errorf("%s: InUse, Queued = %d, %d, want 0, 0", tt.name, st.InUse, st.Queued)
		}
		if got, want := st.Acquired, ok.Load(); got != want {
			t.Errorf("%s: Stats().Acquired = %d, want %d", tt.name, got, want)
		}
	}
}

// TestShedWhenQueueFull fills every slot and queue place, then checks the
// next Acquire is shed at once: without blocking (a blocked call would
// deadlock the bubble) and without the fake clock moving.
func TestShedWhenQueueFull(t *testing.T) {
	tests := []struct{ capacity, queue int }{
		{1, 0}, {1, 1}, {3, 2}, {2, 5},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			l := Must(New(Config{Capacity: tt.capacity, MaxQueue: tt.queue, MaxWait: time.Minute}))
			for range tt.capacity {
				l.TryAcquire()
			}
			var wg sync.WaitGroup
			for range tt.queue {
				wg.Go(func() {
					if err := l.Acquire(context.Background()); err != nil {
						t.Errorf("queued Acquire() = %v, want nil", err)
						return
					}
					l.Release()
				})
			}
			synctest.Wait()
			if got := l.Queued(); got != tt.queue {
				t.Errorf("%+v: Queued() = %d, want %d", tt, got, tt.queue)
			}

			start := time.Now()
			err := l.Acquire(context.Background())
			if !errors.Is(err, ErrFull) {
				t.Errorf("%+v: Acquire #%d = %v, want %v", tt, tt.capacity+tt.queue+1, err, ErrFull)
			}
			if got := time.Since(start); got != 0 {
				t.Errorf("%+v: shed after %v, want at once", tt, got)
			}
			if got := l.TryAcquire(); got {
				t.Errorf("%+v: TryAcquire() = %v, want false", tt, got)
			}

			for range tt.capacity {
				l.Release()
			}
			wg.Wait()
			st := l.Stats()
			want := Stats{Acquired: uint64(tt.capacity + tt.queue), Waited: uint64(tt.queue), Shed: 1}
			if st != want {
				t.Errorf("%+v: Stats() = %+v, want %+v", tt, st, want)
			}
		})
	}
}

// TestQueueTimeout checks that a waiter gives up at exactly MaxWait of
// virtual time, or earlier when its context ends first, and frees its
// queue place either way.
func TestQueueTimeout(t *testing.T) {
	tests := []struct {
		name     string
		maxWait  time.Duration
		deadline time.Duration // 0: none
		wantErr  error
		wantWait time.Duration
	}{
		{"MaxWait", 3 * time.Second, 0, ErrQueueTimeout, 3 * time.Second},
		{"MaxWait before deadline", time.Second, 5 * time.Second, ErrQueueTimeout, time.Second},
		{"deadline before MaxWait", 5 * time.Second, time.Second, context.DeadlineExceeded, time.Second},
		{"no MaxWait", 0, 90 * time.Minute, context.DeadlineExceeded, 90 * time.Minute},
		{"deadline at MaxWait", time.Second, time.Second, nil, time.Second}, // either error
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			l := Must(New(Config{Capacity: 1, MaxQueue: 1, MaxWait: tt.maxWait}))
			l.TryAcquire()
			ctx, cancel := context.WithCancelCause(context.Background())
			if tt.deadline > 0 {
				defer cancelAfter(tt.deadline, cancel, context.DeadlineExceeded)()
			}
			defer cancel(nil)
			start := time.Now()
			err := l.Acquire(ctx)
			if got := time.Since(start); got != tt.wantWait {
				t.Errorf("%s: Acquire returned after %v, want %v", tt.name, got, tt.wantWait)
			}
			switch {
			case tt.wantErr == nil:
				if !errors.Is(err, ErrQueueTimeout) && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s: Acquire() = %v, want %v or %v", tt.name, err, ErrQueueTimeout, context.DeadlineExceeded)
				}
			case !errors.Is(err, tt.wantErr):
				t.Errorf("%s: Acquire() = %v, want %v", tt.name, err, tt.wantErr)
			}
			if got := l.Queued(); got != 0 {
				t.Errorf("%s: Queued() = %d, want 0", tt.name, got)
			}
			if got, want := l.InUse(), 1; got != want {
				t.Errorf("%s: InUse() = %d, want %d", tt.name, got, want)
			}
			l.Release()
		})
	}
}

func TestFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 8
		l := Must(New(Config{Capacity: 1, MaxQueue: n}))
		l.TryAcquire()

		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := l.Acquire(context.Background()); err != nil {
					t.Errorf("Acquire() = %v, want nil", err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				l.Release()
			})
			synctest.Wait() // waiter i is queued before i+1 starts
		}
		if got := l.TryAcquire(); got {
			t.Errorf("TryAcquire() with %d queued = %v, want false (no overtaking)", n, got)
		}
		l.Release()
		wg.Wait()
		for i, got := range order {
			if got != i {
				t.Fatalf("served order = %v, want 0..%d in order", order, n-1)
			}
		}
		if got := len(order); got != n {
			t.Errorf("served %d waiters, want %d", got, n)
		}
	})
}

// TestCancelMidWait cancels a queued caller and checks that Acquire returns
// the cause and that its queue place is free for another caller.
func TestCancelMidWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Must(New(Config{Capacity: 1, MaxQueue: 1}))
		l.TryAcquire()

		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- l.Acquire(ctx) }()
		synctest.Wait()
		if got := l.Queued(); got != 1 {
			t.Fatalf("Queued() = %d, want 1", got)
		}
		if err := l.Acquire(context.Background()); !errors.Is(err, ErrFull) {
			t.Errorf("Acquire() with queue full = %v, want %v", err, ErrFull)
		}

		cancel(errCause)
		if err := <-errc; !errors.Is(err, errCause) {
			t.Errorf("canceled Acquire() = %v, want %v", err, errCause)
		}
		if got := l.Queued(); got != 0 {
			t.Errorf("Queued() after cancel = %d, want 0", got)
		}

		go func() { errc <- l.Acquire(context.Background()) }()
		synctest.Wait()
		if got := l.Queued(); got != 1 {
			t.Errorf("Queued() for the next caller = %d, want 1", got)
		}
		l.Release()
		if err := <-errc; err != nil {
			t.Errorf("next Acquire() = %v, want nil", err)
		}
		l.Release()
		want := Stats{Acquired: 2, Waited: 1, Shed: 1, Canceled: 1}
		if got := l.Stats(); got != want {
			t.Errorf("Stats() = %+v, want %+v", got, want)
		}
	})
}
