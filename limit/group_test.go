package limit

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/internal/fuzzgen"
)

func TestNewGroupPanicsOnBadConfig(t *testing.T) {
	tests := []struct {
		name string
		c    GroupConfig
	}{
		{"negative Capacity", GroupConfig{Capacity: -1}},
		{"negative PerKey", GroupConfig{PerKey: -1}},
		{"negative MaxQueue", GroupConfig{MaxQueue: -1}},
		{"negative MaxWait", GroupConfig{MaxWait: -time.Second}},
		{"negative MaxKeys", GroupConfig{MaxKeys: -1}},
	}
	for _, tt := range tests {
		if got := mustPanic(func() { NewGroup(tt.c) }); !got {
			t.Errorf("%s: NewGroup(%+v) panicked = %v, want true", tt.name, tt.c, got)
		}
	}
}

// TestGroupShares fills keys one after another with TryAcquire and checks
// how many slots each gets out of the shared total.
func TestGroupShares(t *testing.T) {
	tests := []struct {
		name string
		c    GroupConfig
		want []int // slots each of keys "k0", "k1", ... gets, in turn
	}{
		{"defaults", GroupConfig{}, []int{DefaultCapacity / 2, DefaultCapacity / 2, 0}},
		{"PerKey", GroupConfig{Capacity: 10, PerKey: 4}, []int{4, 4, 2, 0}},
		{"PerKey above Capacity", GroupConfig{Capacity: 3, PerKey: 5}, []int{3, 0}},
		{"Capacity 1", GroupConfig{Capacity: 1}, []int{1, 0}},
		{"odd Capacity", GroupConfig{Capacity: 5}, []int{2, 2, 1, 0}},
	}
	for _, tt := range tests {
		g := NewGroup(tt.c)
		for i, want := range tt.want {
			key := "k" + strconv.Itoa(i)
			got := 0
			for g.TryAcquire(key) {
				got++
			}
			if got != want {
				t.Errorf("%s: TryAcquire(%q) succeeded %d times, want %d", tt.name, key, got, want)
			}
		}
	}
}

// TestGroupHotKey saturates one key and checks it is shed with ErrKeyFull
// at its cap while another key still acquires.
func TestGroupHotKey(t *testing.T) {
	tests := []struct {
		c        GroupConfig
		wantCold int
	}{
		{GroupConfig{Capacity: 24}, 12},
		{GroupConfig{Capacity: 24, PerKey: 8, MaxQueue: 10}, 8},
		{GroupConfig{Capacity: 4, PerKey: 3, MaxQueue: 2}, 1},
	}
	for _, tt := range tests {
		g := NewGroup(tt.c)
		ctx := context.Background()
		for i := range g.perKey {
			if err := g.Acquire(ctx, "hot"); err != nil {
				t.Fatalf("%+v: Acquire(hot) #%d = %v, want nil", tt.c, i+1, err)
			}
		}
		err := g.Acquire(ctx, "hot")
		if !errors.Is(err, ErrKeyFull) || !errors.Is(err, ErrFull) {
			t.Errorf("%+v: Acquire(hot) over PerKey = %v, want %v (and %v)", tt.c, err, ErrKeyFull, ErrFull)
		}
		for i := range tt.wantCold {
			if err := g.Acquire(ctx, "cold"); err != nil {
				t.Errorf("%+v: Acquire(cold) #%d = %v, want nil", tt.c, i+1, err)
			}
		}
		if got, want := g.KeyStats("hot"), (KeyStats{InUse: int(g.perKey), Shed: 1}); got != want {
			t.Errorf("%+v: KeyStats(hot) = %+v, want %+v", tt.c, got, want)
		}
		if got, want := g.KeyStats("cold"), (KeyStats{InUse: tt.wantCold}); got != want {
			t.Errorf("%+v: KeyStats(cold) = %+v, want %+v", tt.c, got, want)
		}
	}
}

// TestGroupHotKeyConcurrent hammers one key from many goroutines while
// another key keeps acquiring: the hot key never exceeds PerKey and the
// cold key is never refused.
func TestGroupHotKeyConcurrent(t *testing.T) {
	const perKey = 4
	g := NewGroup(GroupConfig{Capacity: 6, PerKey: perKey, MaxQueue: 8})
	var hot, peak atomic.Int64
	var keyFull atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := g.Acquire(context.Background(), "hot")
				if errors.Is(err, ErrKeyFull) {
					keyFull.Add(1)
					runtime.Gosched()
					continue
				}
				if err != nil {
					t.Errorf("Acquire(hot) = %v, want nil or %v", err, ErrKeyFull)
					return
				}
				maxInt(&peak, hot.Add(1))
				runtime.Gosched()
				hot.Add(-1)
				g.Release("hot")
			}
		})
	}
	for i := range 2000 {
		if err := g.Acquire(context.Background(), "cold"); err != nil {
			t.Errorf("Acquire(cold) #%d = %v, want nil", i+1, err)
			break
		}
		g.Release("cold")
	}
	close(stop)
	wg.Wait()
	if got := peak.Load(); got > perKey {
		t.Errorf("peak holders of hot = %d, want <= %d", got, perKey)
	}
	if got := g.KeyStats("hot"); got.InUse != 0 || got.Shed != keyFull.Load() {
		t.Errorf("KeyStats(hot) = %+v, want InUse 0, Shed %d", got, keyFull.Load())
	}
	if got := g.Stats(); got.InUse != 0 || got.Queued != 0 {
		t.Errorf("Stats() InUse, Queued = %d, %d, want 0, 0", got.InUse, got.Queued)
	}
}

// TestGroupWaitersCountAgainstKey checks that a key's callers queued for a
// shared slot count against its PerKey, and that a waiter that gives up
// returns its key's place.
func TestGroupWaitersCountAgainstKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGroup(GroupConfig{Capacity: 2, PerKey: 2, MaxQueue: 4, MaxWait: time.Second})
		ctx := context.Background()
		g.TryAcquire("a")
		g.TryAcquire("b")

		errc := make(chan error, 2)
		go func() { errc <- g.Acquire(ctx, "a") }()
		synctest.Wait()
		if got, want := g.KeyStats("a").InUse, 2; got != want {
			t.Errorf("KeyStats(a).InUse with one queued = %d, want %d", got, want)
		}
		if err := g.Acquire(ctx, "a"); !errors.Is(err, ErrKeyFull) {
			t.Errorf("third Acquire(a) = %v, want %v", err, ErrKeyFull)
		}
		g.Release("b")
		if err := <-errc; err != nil {
			t.Errorf("queued Acquire(a) = %v, want nil", err)
		}

		start := time.Now()
		go func() { errc <- g.Acquire(ctx, "b") }()
		if err := <-errc; !errors.Is(err, ErrQueueTimeout) {
			t.Errorf("Acquire(b) = %v, want %v", err, ErrQueueTimeout)
		}
		if got, want := time.Since(start), time.Second; got != want {
			t.Errorf("Acquire(b) gave up after %v, want %v", got, want)
		}
		if got := g.KeyStats("b"); got != (KeyStats{}) {
			t.Errorf("KeyStats(b) after timeout = %+v, want zero", got)
		}
		g.Release("a")
		g.Release("a")
		if got := g.Stats(); got.InUse != 0 || got.TimedOut != 1 {
			t.Errorf("Stats() = %+v, want InUse 0, TimedOut 1", got)
		}
	})
}

func TestGroupCanceled(t *testing.T) {
	g := NewGroup(GroupConfig{Capacity: 2})
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errCause)
	if err := g.Acquire(ctx, "a"); !errors.Is(err, errCause) {
		t.Errorf("Acquire(canceled ctx) = %v, want %v", err, errCause)
	}
	if got := g.KeyStats("a"); got != (KeyStats{}) {
		t.Errorf("KeyStats(a) = %+v, want zero", got)
	}
}

// TestGroupMaxKeys checks that keys beyond MaxKeys share one overflow key,
// itself capped at PerKey.
func TestGroupMaxKeys(t *testing.T) {
	g := NewGroup(GroupConfig{Capacity: 10, PerKey: 2, MaxKeys: 2})
	tests := []struct {
		key  string
		want bool
	}{
		{"a", true}, {"a", true}, {"a", false},
		{"b", true},
		{"c", true}, {"d", true}, // c and d share the overflow key
		{"c", false}, {"d", false}, {"e", false},
		{"b", true},
	}
	for i, tt := range tests {
		if got := g.TryAcquire(tt.key); got != tt.want {
			t.Errorf("step %d: TryAcquire(%q) = %v, want %v", i, tt.key, got, tt.want)
		}
	}
	if got, want := g.KeyStats("e"), (KeyStats{InUse: 2}); got != want {
		t.Errorf("KeyStats(e) = %+v, want %+v", got, want)
	}
	g.Release("e") // any overflow key releases the shared overflow place
	if got := g.TryAcquire("c"); !got {
		t.Errorf("TryAcquire(c) after Release(e) = %v, want true", got)
	}
}

func TestGroupReleaseWithoutAcquirePanics(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*Group)
		key   string
	}{
		{"unknown key", func(*Group) {}, "x"},
		{"other key held", func(g *Group) { g.TryAcquire("a") }, "b"},
		{"released twice", func(g *Group) { g.TryAcquire("a"); g.Release("a") }, "a"},
		{"refused key", func(g *Group) {
			g.TryAcquire("a")
			g.TryAcquire("a")
			g.TryAcquire("c")
			g.TryAcquire("c")
			g.TryAcquire("b") // refused by the shared pool
		}, "b"},
	}
	for _, tt := range tests {
		g := NewGroup(GroupConfig{Capacity: 4, PerKey: 2})
		tt.setup(g)
		before := g.Stats().InUse
		if got := mustPanic(func() { g.Release(tt.key) }); !got {
			t.Errorf("%s: Release(%q) panicked = %v, want true", tt.name, tt.key, got)
		}
		if got := g.Stats().InUse; got != before {
			t.Errorf("%s: InUse() after panic = %d, want %d", tt.name, got, before)
		}
	}
}

// TestGroupModel checks TryAcquire and Release against per-key counters
// over 300 generated sequences; FuzzGroupModel explores further.
func TestGroupModel(t *testing.T) { fuzzgen.ForRandomInputs(t, 300, 400, checkGroupModel) }

func FuzzGroupModel(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 400)
	f.Fuzz(func(t *testing.T, data []byte) { checkGroupModel(t, fuzzgen.New(data)) })
}

func checkGroupModel(t testing.TB, gn *fuzzgen.Gen) {
	capacity := gn.IntRange(1, 8)
	perKey := gn.IntRange(1, capacity)
	g := NewGroup(GroupConfig{Capacity: capacity, PerKey: perKey})
	keys := []string{"a", "b", "c"}
	held := map[string]int{}
	total := 0
	for step := 0; gn.More() && step < maxSteps; step++ {
		key := fuzzgen.Pick(gn, keys...)
		if gn.Bool() {
			want := held[key] < perKey && total < capacity
			if got := g.TryAcquire(key); got != want {
				t.Fatalf("TryAcquire(%q) with %v held = %v, want %v", key, held, got, want)
			}
			if want {
				held[key]++
				total++
			}
		} else {
			if got, want := mustPanic(func() { g.Release(key) }), held[key] == 0; got != want {
				t.Fatalf("Release(%q) with %v held panicked = %v, want %v", key, held, got, want)
			}
			if held[key] > 0 {
				held[key]--
				total--
			}
		}
		if got := g.Stats().InUse; got != total {
			t.Fatalf("Stats().InUse = %d, want %d", got, total)
		}
	}
}
