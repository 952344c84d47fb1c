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

	"github.com/recoil-go/recoil/internal/fuzzgen"
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

// TestCancelHandoffRace races a cancellation against the Release that hands
// the waiter its slot, with real goroutines, many times. Whichever wins, no
// slot may be leaked.
func TestCancelHandoffRace(t *testing.T) {
	const rounds = 2000
	var won, lost int
	for range rounds {
		l := Must(New(Config{Capacity: 1, MaxQueue: 1}))
		l.TryAcquire()
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- l.Acquire(ctx) }()
		for l.Queued() == 0 {
			runtime.Gosched()
		}

		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { <-start; cancel(errCause) })
		wg.Go(func() { <-start; l.Release() })
		close(start)
		wg.Wait()

		switch err := <-errc; {
		case err == nil:
			won++
			l.Release()
		case errors.Is(err, errCause):
			lost++
		default:
			t.Fatalf("Acquire() = %v, want nil or %v", err, errCause)
		}
		if got := l.Stats(); got.InUse != 0 || got.Queued != 0 {
			t.Fatalf("after race: InUse, Queued = %d, %d, want 0, 0", got.InUse, got.Queued)
		}
		if !l.TryAcquire() {
			t.Fatal("TryAcquire() after race = false, want true")
		}
	}
	t.Logf("%d rounds: waiter kept the slot %d times, canceled %d times", rounds, won, lost)
}

// TestCanceledWaiterPassesSlotOn cancels a waiter and releases its slot
// back to back, so the waiter often wakes already granted; a waiter that then
// reports cancellation must pass the slot on to the next in the queue.
func TestCanceledWaiterPassesSlotOn(t *testing.T) {
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			l := Must(New(Config{Capacity: 1, MaxQueue: 2}))
			l.TryAcquire()
			ctx, cancel := context.WithCancelCause(context.Background())
			first, second := make(chan error, 1), make(chan error, 1)
			go func() { first <- l.Acquire(ctx) }()
			synctest.Wait()
			go func() { second <- l.Acquire(context.Background()) }()
			synctest.Wait()

			cancel(errCause)
			l.Release()
			synctest.Wait()

			switch err := <-first; {
			case err == nil: // it kept the slot; the second still waits
				if got := l.Queued(); got != 1 {
					t.Fatalf("Queued() = %d, want 1", got)
				}
				l.Release()
			case errors.Is(err, errCause):
			default:
				t.Fatalf("first Acquire() = %v, want nil or %v", err, errCause)
			}
			if err := <-second; err != nil {
				t.Fatalf("second Acquire() = %v, want nil", err)
			}
			l.Release()
			if got := l.Stats(); got.InUse != 0 || got.Queued != 0 {
				t.Fatalf("InUse, Queued = %d, %d, want 0, 0", got.InUse, got.Queued)
			}
		})
	}
}

// TestTimeoutHandoffRace has MaxWait run out at the same virtual instant as
// the Release that hands the waiter its slot.
func TestTimeoutHandoffRace(t *testing.T) {
	var kept, timedOut int
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			l := Must(New(Config{Capacity: 1, MaxQueue: 1, MaxWait: time.Second}))
			l.TryAcquire()
			var wg sync.WaitGroup
			defer wg.Wait()
			wg.Go(func() {
				<-time.After(time.Second)
				l.Release()
			})
			switch err := l.Acquire(context.Background()); {
			case err == nil:
				kept++
				l.Release()
			case errors.Is(err, ErrQueueTimeout):
				timedOut++
			default:
				t.Fatalf("Acquire() = %v, want nil or %v", err, ErrQueueTimeout)
			}
			synctest.Wait()
			if got := l.Stats(); got.InUse != 0 || got.Queued != 0 {
				t.Fatalf("InUse, Queued = %d, %d, want 0, 0", got.InUse, got.Queued)
			}
		})
	}
	t.Logf("kept %d, timed out %d", kept, timedOut)
}

// stress runs goroutines × iterations calls of Acquire or TryAcquire
// through l, some canceled part-way, and checks the books balance. With
// clocked set it must run in a bubble: holds and cancellations then take
// fake time, so MaxWait can run out; otherwise they only yield.
func stress(t *testing.T, l *Limiter, goroutines, iterations int, clocked bool) {
	pause := func(n int) {
		if clocked {
			<-time.After(time.Duration(n) * time.Millisecond)
		} else {
			for range n {
				runtime.Gosched()
			}
		}
	}
	var active, peak atomic.Int64
	var got [4]atomic.Uint64 // nil, ErrFull, ErrQueueTimeout, canceled
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range iterations {
				ctx, cancel := context.WithCancelCause(context.Background())
				var canceler sync.WaitGroup
				if (g+i)%4 == 0 {
					canceler.Go(func() { pause(i % 3); cancel(errCause) })
				}
				var err error
				if (g+i)%5 == 0 {
					if !l.TryAcquire() {
						err = ErrFull
					}
				} else {
					err = l.Acquire(ctx)
				}
				switch {
				case err == nil:
					got[0].Add(1)
					maxInt(&peak, active.Add(1))
					pause(i % 4)
					active.Add(-1)
					l.Release()
				case errors.Is(err, ErrFull):
					got[1].Add(1)
				case errors.Is(err, ErrQueueTimeout):
					got[2].Add(1)
				case errors.Is(err, errCause):
					got[3].Add(1)
				default:
					t.Errorf("Acquire() = %v", err)
				}
				cancel(nil)
				canceler.Wait()
			}
		})
	}
	wg.Wait()
	if p, c := peak.Load(), l.capacity; p > int64(c) {
		t.Errorf("peak holders = %d, want <= %d", p, c)
	}
	st := l.Stats()
	if st.InUse != 0 || st.Queued != 0 {
		t.Errorf("InUse, Queued = %d, %d, want 0, 0", st.InUse, st.Queued)
	}
	if st.Acquired != got[0].Load() || st.TimedOut != got[2].Load() || st.Canceled != got[3].Load() {
		t.Errorf("Stats() = %+v, want Acquired %d, TimedOut %d, Canceled %d",
			st, got[0].Load(), got[2].Load(), got[3].Load())
	}
	t.Logf("ok %d, shed %d, timed out %d, canceled %d", got[0].Load(), got[1].Load(), got[2].Load(), got[3].Load())
}

// TestStress mixes Acquire, TryAcquire, cancellation and shedding on real
// goroutines.
func TestStress(t *testing.T) {
	stress(t, Must(New(Config{Capacity: 3, MaxQueue: 5})), 16, 300, false)
}

// TestStressMaxWait adds MaxWait, on the fake clock. It is kept small: under
// -race, Go 1.26.8's race runtime crashes (ThreadSanitizer CHECK failure or
// SIGSEGV) in bubbles where many goroutines fire fake timers, with or
// without this package; golang/go#78156 reports the same CHECK failure.
func TestStressMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stress(t, Must(New(Config{Capacity: 2, MaxQueue: 4, MaxWait: 2 * time.Millisecond})), 4, 50, true)
	})
}

// TestStateChangesBeforeLock changes the state between the lock-free check
// and the locked one on each slow path, deterministically: the state is
// changed first, then the slow path (wait, handOff) is entered as if it had
// seen the state before the change.
func TestStateChangesBeforeLock(t *testing.T) {
	t.Run("slot freed before Acquire queues", func(t *testing.T) {
		l := Must(New(Config{Capacity: 1, MaxQueue: 1}))
		l.TryAcquire()
		l.Release()
		if err := l.wait(context.Background(), 0); err != nil {
			t.Errorf("wait() = %v, want nil", err)
		}
		if got, want := l.Stats(), (Stats{InUse: 1, Acquired: 2}); got != want {
			t.Errorf("Stats() = %+v, want %+v", got, want)
		}
	})

	t.Run("queue filled before Acquire queues", func(t *testing.T) {
		l := Must(New(Config{Capacity: 1, MaxQueue: 1}))
		l.TryAcquire()
		errc := make(chan error, 1)
		go func() { errc <- l.Acquire(context.Background()) }()
		for l.Queued() == 0 {
			runtime.Gosched()
		}
		if err := l.wait(context.Background(), 0); !errors.Is(err, ErrFull) {
			t.Errorf("wait() = %v, want %v", err, ErrFull)
		}
		l.Release()
		if err := <-errc; err != nil {
			t.Errorf("queued Acquire() = %v, want nil", err)
		}
		l.Release()
		if got, want := l.Stats(), (Stats{Acquired: 2, Waited: 1, Shed: 1}); got != want {
			t.Errorf("Stats() = %+v, want %+v", got, want)
		}
	})

	t.Run("waiter withdraws before Release hands over", func(t *testing.T) {
		l := Must(New(Config{Capacity: 1, MaxQueue: 1}))
		l.TryAcquire()
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- l.Acquire(ctx) }()
		for l.Queued() == 0 {
			runtime.Gosched()
		}
		cancel(errCause)
		if err := <-errc; !errors.Is(err, errCause) {
			t.Errorf("canceled Acquire() = %v, want %v", err, errCause)
		}
		l.Release() // gives the slot back to its stripe …
		l.handOff() // … and, as if it had seen the waiter queued, finds the queue empty once it has the lock
		if got, want := l.Stats(), (Stats{Acquired: 1, Canceled: 1}); got != want {
			t.Errorf("Stats() = %+v, want %+v", got, want)
		}
	})
}

// maxSteps bounds the operations one input drives.
const maxSteps = 2000

// TestLimiterModel checks TryAcquire, Release and a non-blocking Acquire
// against a counter, over 300 generated sequences; FuzzLimiterModel
// explores further.
func TestLimiterModel(t *testing.T) { fuzzgen.ForRandomInputs(t, 300, 400, checkLimiterModel) }

func FuzzLimiterModel(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 400)
	f.Fuzz(func(t *testing.T, data []byte) { checkLimiterModel(t, fuzzgen.New(data)) })
}

func checkLimiterModel(t testing.TB, g *fuzzgen.Gen) {
	capacity := g.IntRange(1, 6)
	l := Must(New(Config{Capacity: capacity}))
	held := 0
	for step := 0; g.More() && step < maxSteps; step++ {
		switch g.Choose(3) {
		case 0:
			want := held < capacity
			if got := l.TryAcquire(); got != want {
				t.Fatalf("TryAcquire() with %d/%d held = %v, want %v", held, capacity, got, want)
			}
			if want {
				held++
			}
		case 1:
			var want error
			if held == capacity {
				want = ErrFull
			}
			if got := l.Acquire(context.Background()); !errors.Is(got, want) {
				t.Fatalf("Acquire() with %d/%d held = %v, want %v", held, capacity, got, want)
			}
			if want == nil {
				held++
			}
		case 2:
			if got, want := mustPanic(l.Release), held == 0; got != want {
				t.Fatalf("Release() with %d held panicked = %v, want %v", held, got, want)
			}
			if held > 0 {
				held--
			}
		}
		if got := l.InUse(); got != held {
			t.Fatalf("InUse() = %d, want %d", got, held)
		}
	}
}
