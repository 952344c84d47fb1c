package bench

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/limit"
)

// The adaptive limiter beside recoil's fixed one and failsafe-go's
// adaptivelimiter: the hot path (take a slot, give it back with the
// attempt's latency) and convergence on one latency trace.

// adaptiveCapacity is large enough that no benchmark goroutine is refused:
// the benchmarks measure the slot, not the queue.
const adaptiveCapacity = 1 << 20

// BenchmarkAdaptive is a slot taken and given back with the attempt's
// latency. Each side reads the clock twice, as a caller timing an attempt
// does: recoil's caller reads it and passes it (ReleaseAt), failsafe-go's
// permit reads it itself. Run it at -cpu=1,8 for the parallel figures.
func BenchmarkAdaptive(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			b.Run("recoil-fixed", func(b *testing.B) {
				l := limit.Must(limit.New(limit.Config{Capacity: adaptiveCapacity}))
				hot(b, m.parallel, func() bool {
					if !l.TryAcquire() {
						return false
					}
					l.Release()
					return true
				})
			})
			b.Run("recoil-adaptive", func(b *testing.B) {
				a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: adaptiveCapacity, Max: adaptiveCapacity}))
				hot(b, m.parallel, func() bool {
					start := time.Now()
					if !a.TryAcquire() {
						return false
					}
					now := time.Now()
					a.ReleaseAt(now, now.Sub(start), false)
					return true
				})
			})
			b.Run("recoil-adaptive-given", func(b *testing.B) {
				// The times given, as the engine on virtual time (the
				// simulator) gives them: the limiter's own cost, without
				// the two clock reads.
				a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: adaptiveCapacity, Max: adaptiveCapacity}))
				var ns atomic.Int64
				hot(b, m.parallel, func() bool {
					if !a.TryAcquire() {
						return false
					}
					a.ReleaseAt(time.Unix(0, ns.Add(1000)), time.Millisecond, false)
					return true
				})
			})
			b.Run("failsafe-go", func(b *testing.B) {
				l := adaptivelimiter.NewBuilder[any]().WithLimits(1, adaptiveCapacity, adaptiveCapacity).Build()
				hot(b, m.parallel, func() bool {
					p, ok := l.TryAcquirePermit()
					if !ok {
						return false
					}
					p.Record()
					return true
				})
			})
		})
	}
}

// hot runs op, counting refusals.
func hot(b *testing.B, parallel bool, op func() bool) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if !op() {
				b.Fatal("refused")
			}
		}
		return
	}
	var refused atomic.Int64
	runParallel(b, func(pb *testing.PB) {
		var n int64
		for pb.Next() {
			if !op() {
				n++
			}
		}
		refused.Add(n)
	})
	report(b, &refused)
}

// slotter is what the convergence run asks of a limiter.
type slotter interface {
	take() (release func(latency time.Duration), ok bool)
	limit() int
}

type recoilSlots struct{ a *limit.Adaptive }

func (r recoilSlots) take() (func(time.Duration), bool) {
	if !r.a.TryAcquire() {
		return nil, false
	}
	return func(lat time.Duration) { r.a.ReleaseAt(time.Now(), lat, false) }, true
}
func (r recoilSlots) limit() int { return r.a.Limit() }

type failsafeSlots struct {
	l adaptivelimiter.AdaptiveLimiter[any]
}

func (f failsafeSlots) take() (func(time.Duration), bool) {
	p, ok := f.l.TryAcquirePermit()
	if !ok {
		return nil, false
	}
	return func(time.Duration) { p.Record() }, true // the permit times itself
}
func (f failsafeSlots) limit() int { return f.l.Limit() }

// knee is a dependency with room for k attempts at once, each taking base:
// beyond k, attempts queue and each takes base × inFlight ÷ k (Little's
// law for a server of k workers).
type knee struct {
	mu     sync.Mutex
	k      int
	base   time.Duration
	flight int
}

func (d *knee) set(k int, base time.Duration) {
	d.mu.Lock()
	d.k, d.base = k, base
	d.mu.Unlock()
}

// enter starts an attempt and returns how long it takes.
func (d *knee) enter() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flight++
	if d.flight <= d.k {
		return d.base
	}
	return time.Duration(float64(d.base) * float64(d.flight) / float64(d.k))
}

func (d *knee) leave() {
	d.mu.Lock()
	d.flight--
	d.mu.Unlock()
}

// trace is one convergence run's limit, sampled every second of virtual
// time.
type trace struct {
	limits []int
}

// settle summarises the seconds [from, to) of t as a step response: the
// level the limit settled at (the mean of the phase's last 20 s), the
// seconds from from until it stayed within ±10 % of that level, and the
// overshoot, how far past that level it went on the way (the most above
// it for a rise, the most below it for a fall), as a share of it.
func (t trace) settle(from, to int) (level float64, settled int, overshoot float64) {
	for _, l := range t.limits[to-20 : to] {
		level += float64(l)
	}
	level /= 20
	settled = 0
	for s := from; s < to; s++ {
		if math.Abs(float64(t.limits[s])/level-1) > 0.10 {
			settled = s + 1 - from
		}
	}
	rise := level >= float64(t.limits[from])
	for _, l := range t.limits[from:to] {
		if rise {
			overshoot = max(overshoot, float64(l)/level-1)
		} else {
			overshoot = max(overshoot, 1-float64(l)/level)
		}
	}
	return level, settled, overshoot
}

// converge runs 200 callers in a closed loop against a knee of 40 slots at
// 100 ms for a minute, then steps the dependency to 20 slots at 200 ms (it
// got slower: half the room, twice the time) for another, on virtual time
// (testing/synctest), and records the limit each second. A caller the
// limiter refuses tries again 10 ms later.
func converge(t *testing.T, newSlotter func() slotter) trace {
	var tr trace
	synctest.Test(t, func(t *testing.T) {
		l := newSlotter() // inside the bubble: a limiter that reads the clock reads its clock
		ctx, stop := context.WithCancel(context.Background())
		d := &knee{}
		d.set(40, 100*time.Millisecond)
		var wg sync.WaitGroup
		for range 200 {
			wg.Go(func() {
				for ctx.Err() == nil {
					release, ok := l.take()
					if !ok {
						time.Sleep(10 * time.Millisecond)
						continue
					}
					lat := d.enter()
					time.Sleep(lat)
					d.leave()
					release(lat)
				}
			})
		}
		for s := range 120 {
			if s == 60 {
				d.set(20, 200*time.Millisecond)
			}
			time.Sleep(time.Second)
			tr.limits = append(tr.limits, l.limit())
		}
		stop()
		wg.Wait()
	})
	return tr
}

// TestAdaptiveConvergence runs recoil's adaptive limiter (with its
// defaults, and with a Tolerance of 1.1) and failsafe-go's
// adaptivelimiter (with its defaults), each with an initial limit of 20
// and bounds of 1 and 1000, on the same trace (converge), and reports for
// each phase the level the limit settled at (beside the knee), the time it
// took to stay within ±10 % of it and its overshoot. The scheduling of 200
// goroutines moves the figures from run to run — on a loaded machine the
// second minute's by a third and more, as a re-baselined minimum latency
// lifts a limit that had come down — so it holds what the docs conclude,
// not one run's figures: the bands below, and that recoil's limit settles
// sooner than failsafe-go's in the first minute and lower in the second.
func TestAdaptiveConvergence(t *testing.T) {
	// Two minutes of virtual time for 200 goroutines, three times: about
	// a minute and a half under -race.
	testsvc.SkipUnlessLong(t, "the adaptive limiters' convergence beside failsafe-go's (two minutes of virtual time, three times)")
	type phase struct {
		lo, hi   float64 // the level settled at, as a multiple of the knee
		in       [2]int  // the seconds it took, at least and at most
		overshot float64 // the most overshoot
	}
	runs := []struct {
		name        string
		l           func() slotter
		start, step phase
	}{
		{"recoil", func() slotter {
			return recoilSlots{limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 20, Min: 1, Max: 1000}))}
		}, phase{1.4, 2.0, [2]int{3, 15}, 0.15}, phase{0.5, 2.0, [2]int{0, 60}, 0.6}},
		{"recoil-tol1.1", func() slotter {
			return recoilSlots{limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 20, Min: 1, Max: 1000, Tolerance: 1.1}))}
		}, phase{1.1, 1.5, [2]int{2, 15}, 0.15}, phase{0.5, 1.6, [2]int{0, 60}, 0.6}},
		{"failsafe-go", func() slotter {
			return failsafeSlots{adaptivelimiter.NewBuilder[any]().WithLimits(1, 1000, 20).Build()}
		}, phase{0.9, 1.5, [2]int{20, 60}, 0.3}, phase{1.5, 3.0, [2]int{0, 60}, 0.3}},
	}
	type got struct {
		level [2]float64
		in    [2]int
	}
	res := map[string]got{}
	for _, r := range runs {
		tr := converge(t, r.l)
		var g got
		for _, ph := range []struct {
			name     string
			from, to int
			knee     float64
			want     phase
		}{{"start", 0, 60, 40, r.start}, {"step", 60, 120, 20, r.step}} {
			level, in, over := tr.settle(ph.from, ph.to)
			i := ph.from / 60
			g.level[i], g.in[i] = level/ph.knee, in
			t.Logf("%-14s %-5s settled at %5.1f (%.2f× the knee of %.0f) in %2d s, overshoot %3.0f %%", r.name, ph.name, level, level/ph.knee, ph.knee, in, 100*over)
			if x := level / ph.knee; x < ph.want.lo || x > ph.want.hi || in < ph.want.in[0] || in > ph.want.in[1] || over > ph.want.overshot {
				t.Errorf("%s, %s: %.2f× the knee in %d s, overshoot %.2f; the docs say %.2f–%.2f× in %d–%d s, at most %.2f",
					r.name, ph.name, x, in, over, ph.want.lo, ph.want.hi, ph.want.in[0], ph.want.in[1], ph.want.overshot)
			}
		}
		t.Logf("%-14s limits %v", r.name, tr.limits)
		res[r.name] = g
	}
	if rc, fs := res["recoil"], res["failsafe-go"]; rc.in[0] >= fs.in[0] || rc.level[1] >= fs.level[1] {
		t.Errorf("recoil settled in %d s at first (failsafe-go: %d s) and at %.2f× the knee after the step (failsafe-go: %.2f×); the docs say sooner, and lower",
			rc.in[0], fs.in[0], rc.level[1], fs.level[1])
	}
}
