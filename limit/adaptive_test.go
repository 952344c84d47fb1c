package limit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// load drives a on virtual time: for d, every step it fills the limit (at
// most want attempts in flight), and releases them step later with
// latency lat (overload as given). It returns the time reached.
func load(t *testing.T, a *Adaptive, now time.Time, d, step time.Duration, want int, lat func(inFlight int) time.Duration, overload bool) time.Time {
	t.Helper()
	for end := now.Add(d); now.Before(end); now = now.Add(step) {
		n := 0
		for n < want && a.TryAcquire() {
			n++
		}
		l := lat(n)
		for range n {
			a.ReleaseAt(now.Add(step), l, overload)
		}
	}
	return now
}

func constant(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

func TestNewAdaptiveRefuses(t *testing.T) {
	for _, tc := range []struct {
		c     AdaptiveConfig
		field string
	}{
		{AdaptiveConfig{Min: -1}, "AdaptiveConfig.Min"},
		{AdaptiveConfig{Max: -1}, "AdaptiveConfig.Max"},
		{AdaptiveConfig{Max: 1 << 40}, "AdaptiveConfig.Max"},
		{AdaptiveConfig{Min: 10, Max: 5}, "AdaptiveConfig.Min"},
		{AdaptiveConfig{Initial: 5, Min: 10}, "AdaptiveConfig.Initial"},
		{AdaptiveConfig{Initial: 50, Max: 10}, "AdaptiveConfig.Initial"},
		{AdaptiveConfig{Initial: -1}, "AdaptiveConfig.Initial"},
		{AdaptiveConfig{MaxQueue: -1}, "AdaptiveConfig.MaxQueue"},
		{AdaptiveConfig{MaxWait: -1}, "AdaptiveConfig.MaxWait"},
		{AdaptiveConfig{Window: -1}, "AdaptiveConfig.Window"},
		{AdaptiveConfig{WindowSamples: -1}, "AdaptiveConfig.WindowSamples"},
		{AdaptiveConfig{LongWindow: -1}, "AdaptiveConfig.LongWindow"},
		{AdaptiveConfig{Warmup: -1}, "AdaptiveConfig.Warmup"},
		{AdaptiveConfig{Tolerance: 0.5}, "AdaptiveConfig.Tolerance"},
		{AdaptiveConfig{Smoothing: 1.5}, "AdaptiveConfig.Smoothing"},
		{AdaptiveConfig{Decrease: 1}, "AdaptiveConfig.Decrease"},
		{AdaptiveConfig{Reserve: 0.5}, "AdaptiveConfig.Reserve"},
	} {
		_, err := NewAdaptive(tc.c)
		var ce *ConfigError
		if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("NewAdaptive(%+v) = %v, want a ConfigError on %s", tc.c, err, tc.field)
		}
	}
	a := Must(NewAdaptive(AdaptiveConfig{}))
	if a.Limit() != DefaultAdaptiveInitial {
		t.Errorf("zero config: Limit() = %d, want %d", a.Limit(), DefaultAdaptiveInitial)
	}
	if a := Must(NewAdaptive(AdaptiveConfig{Max: 5})); a.Limit() != 5 {
		t.Errorf("Max 5: Limit() = %d, want the initial limit brought within Max", a.Limit())
	}
}

// TestAdaptiveMoves pins how each signal moves the limit.
func TestAdaptiveMoves(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        AdaptiveConfig
		want     int // attempts offered each step
		lat      func(int) time.Duration
		overload bool
		d        time.Duration
		lo, hi   int // the limit after d
	}{
		// A busy limiter with steady latency grows by √limit a window
		// until it is no longer reached.
		{"busy grows", AdaptiveConfig{}, 1000, constant(100 * time.Millisecond), false, 10 * time.Second, 60, 1000},
		// An idle one (10 in flight of 20) does not.
		{"idle holds", AdaptiveConfig{}, 5, constant(100 * time.Millisecond), false, 10 * time.Second, 20, 20},
		// Overload in every window: ×0.8 a window, to Min.
		{"overload falls", AdaptiveConfig{Initial: 100}, 1000, constant(time.Second), true, 5 * time.Second, 40, 41}, // four windows: 100 × 0.8⁴
		{"overload floors", AdaptiveConfig{Initial: 100, Min: 4}, 1000, constant(time.Second), true, time.Minute, 4, 4},
		{"max caps", AdaptiveConfig{Max: 50}, 1000, constant(100 * time.Millisecond), false, 30 * time.Second, 50, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Must(NewAdaptive(tc.c))
			load(t, a, t0, tc.d, 500*time.Millisecond, tc.want, tc.lat, tc.overload)
			if got := a.Limit(); got < tc.lo || got > tc.hi {
				t.Errorf("limit %d after %v, want in [%d, %d]", got, tc.d, tc.lo, tc.hi)
			}
		})
	}
}

// TestAdaptiveGradientFindsTheKnee runs a dependency whose latency rises
// with the attempts in flight past a knee of 40: the limit settles near
// the knee, neither at the ceiling nor at the floor.
func TestAdaptiveGradientFindsTheKnee(t *testing.T) {
	const knee = 40
	lat := func(n int) time.Duration {
		if n <= knee {
			return 100 * time.Millisecond
		}
		return time.Duration(float64(100*time.Millisecond) * float64(n) / knee * float64(n) / knee)
	}
	a := Must(NewAdaptive(AdaptiveConfig{}))
	load(t, a, t0, 5*time.Minute, 250*time.Millisecond, 10_000, lat, false)
	if got := a.Limit(); got < knee*3/4 || got > knee*2 {
		t.Errorf("limit %d after 5 minutes, want near the knee %d (in [%d, %d])", got, knee, knee*3/4, knee*2)
	}
	short, long := a.Latency(t0.Add(5 * time.Minute))
	if long <= 0 || short < long {
		t.Errorf("Latency() = %v, %v: want a known minimum no larger than the last window", short, long)
	}
}

// TestAdaptiveRecovers: after a stretch of timeouts at the floor, the limit
// is back above 20 within a minute of the dependency answering at 2 s.
func TestAdaptiveRecovers(t *testing.T) {
	a := Must(NewAdaptive(AdaptiveConfig{}))
	now := load(t, a, t0, time.Minute, time.Second, 10, constant(2*time.Second), false)
	now = load(t, a, now, 2*time.Minute, 10*time.Second, 100, constant(10*time.Second), true)
	if a.Limit() > 2 {
		t.Fatalf("limit %d after two minutes of timeouts, want the floor 1 (2 with the last window still open)", a.Limit())
	}
	load(t, a, now, time.Minute, 2*time.Second, 20, constant(2*time.Second), false)
	if a.Limit() < 20 {
		t.Errorf("limit %d a minute after recovery, want 20 or more", a.Limit())
	}
}

func TestAdaptiveReserve(t *testing.T) {
	a := Must(NewAdaptive(AdaptiveConfig{Initial: 10, Reserve: 0.2}))
	for _, tc := range []struct {
		p     Priority
		retry bool
		want  int // slots this rank fills from empty
	}{
		{Background, true, 6}, {Background, false, 8}, {Interactive, true, 10}, {Interactive, false, 10},
	} {
		n := 0
		for a.TryAcquireAs(tc.p, tc.retry) {
			n++
		}
		for range n {
			a.Release()
		}
		if n != tc.want {
			t.Errorf("%v retry=%v took %d slots, want %d", tc.p, tc.retry, n, tc.want)
		}
	}
}

func TestAdaptiveQueueWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := Must(NewAdaptive(AdaptiveConfig{Initial: 1, Max: 1, MaxQueue: 4, MaxWait: time.Second}))
		a.TryAcquire()
		if err := a.Acquire(context.Background()); !errors.Is(err, ErrQueueTimeout) {
			t.Errorf("Acquire with the slot held past MaxWait = %v, want ErrQueueTimeout", err)
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		stop := errors.New("caller left")
		go func() { time.Sleep(100 * time.Millisecond); cancel(stop) }()
		if err := a.Acquire(ctx); !errors.Is(err, stop) {
			t.Errorf("Acquire canceled = %v, want the cause", err)
		}
		if s := a.Stats(); s.TimedOut != 1 || s.Canceled != 1 || s.Queued != 0 || s.InUse != 1 {
			t.Errorf("Stats() = %+v", s)
		}
		a.ReleaseAt(time.Time{}, time.Millisecond, false)
		if a.InUse() != 0 {
			t.Errorf("InUse() = %d after release", a.InUse())
		}
	})
}

func TestAdaptiveReleasePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Release without a slot did not panic")
		}
	}()
	Must(NewAdaptive(AdaptiveConfig{})).ReleaseAt(t0, time.Second, false)
}

// TestAdaptiveConcurrent: many goroutines acquiring, releasing with
// samples and queueing never hold more slots than the ceiling and leave
// nothing held.
func TestAdaptiveConcurrent(t *testing.T) {
	a := Must(NewAdaptive(AdaptiveConfig{Initial: 8, Max: 16, MaxQueue: 8, Window: time.Microsecond, WindowSamples: 1}))
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				if err := a.AcquireAs(context.Background(), Priority(g%2), i%3 == 0); err != nil {
					continue
				}
				if n := a.InUse(); n > 16 {
					t.Errorf("%d slots held, above Max", n)
				}
				a.ReleaseAt(time.Time{}, time.Duration(1+i%7)*time.Millisecond, i%50 == 0)
			}
		})
	}
	wg.Wait()
	if s := a.Stats(); s.InUse != 0 || s.Queued != 0 {
		t.Errorf("Stats() = %+v after every goroutine returned", s)
	}
}

// FuzzAdaptiveModel drives an Adaptive with a byte string of operations —
// take a slot of some priority, give one back with a latency (overloaded
// or not) at a later instant, or without — and checks after each that the
// slots held are what a counter says, the limit stays in [Min, Max], and
// no rank holds more than its ceiling allows it to take.
func FuzzAdaptiveModel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0, 0, 0, 0, 0x84, 0x84, 0x84, 0x84, 0xff, 0x10, 0x20})
	f.Add([]byte{3, 3, 3, 0x41, 0x41, 0xc1, 0xc1, 2, 2, 0x81, 0x81, 0x81})
	f.Fuzz(func(t *testing.T, ops []byte) {
		a := Must(NewAdaptive(AdaptiveConfig{Initial: 4, Min: 2, Max: 8, Window: time.Second, WindowSamples: 2, Warmup: 1, Reserve: 0.25}))
		now, held := t0, 0
		for i, op := range ops {
			switch op & 3 {
			case 0, 1: // take a slot: bit 2 background, bit 3 a retry
				p, retry := Priority(op>>2&1), op&8 != 0
				ceil := a.Limit() // what this rank may fill: the limit, less the reserve for background
				if p == Background {
					share := 0.75
					if retry {
						share = 0.5
					}
					ceil = max(int(float64(ceil)*share), 1)
				}
				before := a.InUse()
				got := a.TryAcquireAs(p, retry)
				if got != (before < ceil) {
					t.Fatalf("op %d: TryAcquireAs(%v, %v) = %v with %d held and a ceiling of %d", i, p, retry, got, before, ceil)
				}
				if got {
					held++
				}
			case 2: // give one back with a latency
				if held == 0 {
					continue
				}
				now = now.Add(time.Duration(op>>2) * 50 * time.Millisecond)
				a.ReleaseAt(now, time.Duration(1+op>>3)*20*time.Millisecond, op&4 != 0)
				held--
			case 3: // give one back without a sample
				if held == 0 {
					continue
				}
				a.Release()
				held--
			}
			if a.InUse() != held {
				t.Fatalf("op %d: InUse %d, want %d", i, a.InUse(), held)
			}
			if l := a.Limit(); l < 2 || l > 8 {
				t.Fatalf("op %d: limit %d outside [2, 8]", i, l)
			}
		}
	})
}
