package limit

// The limiter under races: hand-offs against cancellation and timeouts, a
// stress run of every path at once, and the model check.

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
)

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
