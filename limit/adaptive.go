package limit

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/internal/priority"
)

// Priority is how much a caller waits on an attempt: Interactive (the
// zero value) or Background. It is the type recoil.Priority is, so the
// engine passes a call's priority straight to TryAcquireAs and AcquireAs.
type Priority = priority.Priority

// The priorities an Adaptive limiter queues and sheds by.
const (
	// Interactive attempts are queued ahead of background ones and are
	// never shed while a background attempt is queued.
	Interactive = priority.Interactive
	// Background attempts yield to interactive ones; a background retry is
	// the first thing shed.
	Background = priority.Background
)

// Defaults of an AdaptiveConfig's zero fields.
const (
	DefaultAdaptiveInitial = 20            // the limit before any latency is known
	DefaultAdaptiveMin     = 1             // the floor: one attempt may always go, the probe
	DefaultAdaptiveMax     = 1000          // the ceiling
	DefaultWindow          = time.Second   // the short window the latency is averaged over
	DefaultWindowSamples   = 10            // samples a window needs to move the gradient
	DefaultLongWindow      = time.Minute   // the span of the windowed minimum latency
	DefaultWarmup          = 3             // full windows before the gradient moves the limit
	DefaultTolerance       = 1.5           // how much slower than the minimum a window may be before the limit falls
	DefaultSmoothing       = 0.2           // the share of a gradient decrease applied per window
	DefaultDecrease        = 0.8           // the factor a window with an overload signal multiplies the limit by
	maxAdaptiveLimit       = math.MaxInt32 // Max's bound, for the 32-bit half of the state word
	minGradient            = 0.5           // the gradient's floor: one window at most halves the target
	longBuckets            = 4             // the windowed minimum keeps LongWindow in this many buckets
	neverNs                = math.MinInt64 // a window start not yet set
)

// AdaptiveConfig configures an Adaptive limiter. Every zero field means the
// default documented beside it, so the zero AdaptiveConfig is a usable
// limiter: 20 attempts at first, moving between 1 and 1000.
type AdaptiveConfig struct {
	// Initial is the limit before the latency is known; zero means
	// DefaultAdaptiveInitial (20). It must lie in [Min, Max].
	Initial int
	// Min is the floor of the limit; zero means DefaultAdaptiveMin (1).
	// At least one attempt always goes, so the limiter learns when the
	// dependency recovers.
	Min int
	// Max is the ceiling of the limit; zero means DefaultAdaptiveMax
	// (1000). New refuses one above math.MaxInt32.
	Max int

	// MaxQueue is how many callers of Acquire may wait for a slot, ordered
	// by priority (see Adaptive); zero means no queue. It is always
	// bounded.
	MaxQueue int
	// MaxWait is the longest a caller waits in the queue before
	// ErrQueueTimeout; zero means no limit other than its context.
	MaxWait time.Duration

	// Window is the short window: the latencies reported in it are
	// averaged, and the limit moves once at its end (once the window has
	// a sample). Zero means DefaultWindow (1 s).
	Window time.Duration
	// WindowSamples is how many latencies a window needs before its
	// average moves the gradient; a window with fewer moves the limit by
	// AIMD only. Zero means DefaultWindowSamples (10).
	WindowSamples int
	// LongWindow is how far back the minimum latency is taken: the
	// least window average of the last LongWindow is the dependency's
	// latency when it is not loaded — unless a baseline measured with no
	// more attempts in flight than now is less, which the limit's own load
	// cannot raise (it is replaced after ten LongWindows regardless). Zero
	// means DefaultLongWindow (1 min).
	LongWindow time.Duration
	// Warmup is how many windows of WindowSamples latencies must be seen
	// before the gradient moves the limit; until then only AIMD does.
	// Zero means DefaultWarmup (3).
	Warmup int
	// Tolerance is how much slower than the minimum latency a window's
	// average may be before the gradient lowers the limit: the gradient
	// is Tolerance × minimum ÷ average, clamped to [0.5, 1]. Zero means
	// DefaultTolerance (1.5, as Netflix's Gradient2); New refuses one below 1.
	Tolerance float64
	// Smoothing is the share of a gradient decrease applied at each
	// window, in (0, 1]; zero means DefaultSmoothing (0.2).
	Smoothing float64
	// Decrease is the multiplicative decrease: the factor a window in
	// which an attempt reported overload (a 429, 503 or 529, or a timeout)
	// multiplies the limit by, in (0, 1). Zero means DefaultDecrease (0.8).
	Decrease float64
	// Reserve is the share of the limit that background attempts may not
	// take, in [0, 0.5): a background first attempt goes only while fewer
	// than limit × (1 − Reserve) slots are held, a background retry only
	// while fewer than limit × (1 − 2·Reserve) are (each at least one), so
	// interactive attempts find room even when TryAcquire is all a driver
	// uses. Zero means no reservation: priorities then act in the queue
	// only.
	Reserve float64
}

// Adaptive is a concurrency limiter whose limit follows the dependency.
// Like a Limiter it holds a slot per attempt, queues at most MaxQueue
// callers for at most MaxWait, and sheds the rest with ErrFull; unlike a
// Limiter, its capacity is not a number you chose but one it measures.
// Each attempt gives its slot back with ReleaseAt, saying how long the
// attempt took and whether the dependency signalled overload, and the
// limit moves once a window (see docs/adaptive.md):
//
//   - AIMD: a window in which any attempt reported overload (a 429, 503
//     or 529, or a timeout) multiplies the limit by Decrease; a window
//     without one adds √limit, provided the attempts in flight reached
//     half the limit (an idle limiter does not grow).
//   - Gradient: once warm, a window of WindowSamples latencies or more is
//     compared with the dependency's unloaded latency — the least window
//     average of the last LongWindow, or the baseline, a window measured
//     with no more attempts in flight, if that is less:
//     gradient = clamp(Tolerance × minimum ÷ average, 0.5, 1), and the
//     limit moves towards limit × gradient + √limit, by Smoothing of the
//     way when that is a decrease.
//
// The limit stays in [Min, Max]. Time and latency are arguments
// (ReleaseAt), so a simulator runs it on virtual time; nothing in it reads
// a clock except Acquire's MaxWait timer and a zero now.
//
// Priorities: TryAcquireAs and AcquireAs take the attempt's Priority and
// whether it is a retry, which rank it — interactive first attempts, then
// interactive retries, background first attempts, background retries.
// Queued callers are served best rank first, FIFO within a rank; a caller
// that finds the queue full takes the place of the newest waiter of a
// worse rank, which is shed with ErrFull, so an interactive attempt is
// never shed while a background one is queued and a background retry is
// the first thing shed. Reserve, if set, also keeps a share of the
// limit for interactive attempts. TryAcquire and Acquire are the
// interactive first attempt's.
//
// TryAcquire and a Release or ReleaseAt with nobody queued take no lock:
// a compare-and-swap on a state word; ReleaseAt adds its sample to atomic
// window counters, and the one call that finds the window over (by a
// compare-and-swap on its start) takes the estimator's lock to move the
// limit. The wait queue has a lock of its own, so queueing callers never
// delay a window's close. Nothing on these paths allocates.
//
// An Adaptive must be made with NewAdaptive; it is safe for concurrent
// use. Its one panic is a release without a slot held.
type Adaptive struct {
	state    atomic.Uint64 // inUse | queued<<32, as Limiter's
	acquired counter
	ceil     [priority.Ranks]atomic.Uint64 // the slots each rank may fill: the limit, less Reserve for background

	// The window under way: samples (low 32 bits) and overloads (high),
	// the sum of latencies, the most attempts seen in flight, and when the
	// window began (Unix nanoseconds; neverNs before the first sample).
	wn    atomic.Uint64
	wsum  atomic.Int64
	wpeak atomic.Uint64
	wfrom atomic.Int64

	// The estimator: what the closed windows taught. est, warm, short,
	// mins and the baseline are guarded by emu, which only the one caller
	// closing a window and readers of Latency take: never the queue.
	emu   sync.Mutex
	est   float64 // the limit, before rounding down
	warm  int     // full windows seen
	short float64 // the last full window's average latency, ns
	mins  minFilter
	// The baseline: a full window's average latency and the most attempts
	// in flight during it. Only a window with no more in flight replaces
	// it (or any window, once it is ten LongWindows old), so the load the
	// limit itself adds never passes for the dependency's own latency.
	base, basePeak float64
	baseAt         int64

	// The wait queue, guarded by qmu, its own lock: queueing callers never
	// hold up the window's close, nor a close the queue.
	qmu   sync.Mutex
	queue rankQueue

	c AdaptiveConfig // with defaults applied

	shed, waited, timedOut, canceled atomic.Uint64
}

// NewAdaptive returns an Adaptive limiter configured by c; zero fields take
// the defaults documented on AdaptiveConfig. It refuses, with a
// *ConfigError wrapping ErrConfig, a field out of range: a negative count
// or duration, Max above math.MaxInt32, Min above Max, Initial outside
// [Min, Max], Tolerance below 1, Smoothing outside (0, 1], Decrease
// outside (0, 1), Reserve outside [0, 0.5).
func NewAdaptive(c AdaptiveConfig) (*Adaptive, error) {
	const typ = "AdaptiveConfig."
	switch {
	case c.Min < 0:
		return nil, invalid(typ+"Min", c.Min, "0 (default 1) or more")
	case c.Max < 0 || c.Max > maxAdaptiveLimit:
		return nil, invalid(typ+"Max", c.Max, "0 (default 1000) to 2147483647")
	case c.Initial < 0:
		return nil, invalid(typ+"Initial", c.Initial, "0 (default 20) or more")
	case c.MaxQueue < 0 || c.MaxQueue > maxField:
		return nil, invalid(typ+"MaxQueue", c.MaxQueue, "0 to 2147483647 (the queue is always bounded)")
	case c.MaxWait < 0:
		return nil, invalid(typ+"MaxWait", c.MaxWait, "0 (no limit) or more")
	case c.Window < 0:
		return nil, invalid(typ+"Window", c.Window, "0 (default 1s) or more")
	case c.WindowSamples < 0:
		return nil, invalid(typ+"WindowSamples", c.WindowSamples, "0 (default 10) or more")
	case c.LongWindow < 0:
		return nil, invalid(typ+"LongWindow", c.LongWindow, "0 (default 1m) or more")
	case c.Warmup < 0:
		return nil, invalid(typ+"Warmup", c.Warmup, "0 (default 3) or more")
	case !(c.Tolerance == 0 || c.Tolerance >= 1) || math.IsInf(c.Tolerance, 0):
		return nil, invalid(typ+"Tolerance", c.Tolerance, "0 (default 1.5) or a finite number of at least 1")
	case !(c.Smoothing >= 0 && c.Smoothing <= 1):
		return nil, invalid(typ+"Smoothing", c.Smoothing, "in (0, 1] (0 means 0.2)")
	case !(c.Decrease >= 0 && c.Decrease < 1):
		return nil, invalid(typ+"Decrease", c.Decrease, "in (0, 1) (0 means 0.8)")
	case !(c.Reserve >= 0 && c.Reserve < 0.5):
		return nil, invalid(typ+"Reserve", c.Reserve, "in [0, 0.5)")
	}
	c.Min = or(c.Min, DefaultAdaptiveMin)
	c.Max = or(c.Max, max(DefaultAdaptiveMax, c.Min))
	if c.Min > c.Max {
		return nil, invalid(typ+"Min", c.Min, "at most Max")
	}
	c.Initial = or(c.Initial, min(max(DefaultAdaptiveInitial, c.Min), c.Max))
	if c.Initial < c.Min || c.Initial > c.Max {
		return nil, invalid(typ+"Initial", c.Initial, "in [Min, Max]")
	}
	c.Window = or(c.Window, DefaultWindow)
	c.WindowSamples = or(c.WindowSamples, DefaultWindowSamples)
	c.LongWindow = or(c.LongWindow, DefaultLongWindow)
	c.Warmup = or(c.Warmup, DefaultWarmup)
	c.Tolerance = or(c.Tolerance, DefaultTolerance)
	c.Smoothing = or(c.Smoothing, DefaultSmoothing)
	c.Decrease = or(c.Decrease, DefaultDecrease)
	a := &Adaptive{c: c, est: float64(c.Initial)}
	a.wfrom.Store(neverNs)
	a.setCeilings()
	return a, nil
}

func or[T int | float64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Limit returns the current limit: the attempts that may be in flight.
func (a *Adaptive) Limit() int { return int(a.ceil[0].Load()) }

// InUse returns the number of slots held now.
func (a *Adaptive) InUse() int { return int(inUse(a.state.Load())) }

// Queued returns the number of callers waiting for a slot now.
func (a *Adaptive) Queued() int { return int(queued(a.state.Load())) }

// Latency returns the average latency of the last window that had
// WindowSamples latencies, and the minimum window average of the last
// LongWindow as of now (zero: the clock), the two the gradient compares;
// zero before any is known.
func (a *Adaptive) Latency(now time.Time) (short, long time.Duration) {
	a.emu.Lock()
	defer a.emu.Unlock()
	l := a.mins.min(unixNs(now), a.bucket())
	if a.base > 0 {
		l = min(l, a.base)
	}
	if math.IsInf(l, 1) {
		l = 0
	}
	return time.Duration(a.short), time.Duration(l)
}

// Stats returns a snapshot of the limiter's gauges and counters. Shed
// counts the callers of Acquire refused with ErrFull, those evicted from
// the queue by a better rank included.
func (a *Adaptive) Stats() Stats {
	s := a.state.Load()
	return Stats{
		InUse: int(inUse(s)), Queued: int(queued(s)),
		Acquired: a.acquired.load(), Waited: a.waited.Load(), Shed: a.shed.Load(),
		TimedOut: a.timedOut.Load(), Canceled: a.canceled.Load(),
	}
}

// TryAcquire is TryAcquireAs(Interactive, false).
func (a *Adaptive) TryAcquire() bool { return a.TryAcquireAs(Interactive, false) }

// TryAcquireAs takes a slot for an attempt of priority p (retry: not the
// call's first) if one is free to its rank and nobody is queued, and
// reports whether it did. It never blocks. A true result must be paired
// with exactly one Release or ReleaseAt.
func (a *Adaptive) TryAcquireAs(p Priority, retry bool) bool {
	ceil := a.ceil[priority.Rank(p, retry)].Load()
	for {
		s := a.state.Load()
		if inUse(s) >= ceil || queued(s) != 0 {
			return false
		}
		if a.state.CompareAndSwap(s, s+1) {
			a.acquired.add()
			return true
		}
	}
}

// Acquire is AcquireAs(ctx, Interactive, false).
func (a *Adaptive) Acquire(ctx context.Context) error { return a.AcquireAs(ctx, Interactive, false) }

// AcquireAs takes a slot for an attempt of priority p (retry: not the
// call's first), waiting in the queue if necessary. It returns nil once
// the caller holds a slot, which it must give back with Release or
// ReleaseAt. Otherwise it holds nothing and returns context.Cause(ctx) if
// ctx is done first; ErrFull at once if the queue is full of callers of
// the same rank or better, or later if a better-ranked caller takes its
// place; ErrQueueTimeout after MaxWait.
func (a *Adaptive) AcquireAs(ctx context.Context, p Priority, retry bool) error {
	if ctx.Err() != nil {
		a.canceled.Add(1)
		return context.Cause(ctx)
	}
	if a.TryAcquireAs(p, retry) {
		return nil
	}
	rank := priority.Rank(p, retry)
	a.qmu.Lock()
	if queued(a.state.Load()) >= uint64(a.c.MaxQueue) {
		if !a.queue.evictWorse(rank) {
			a.qmu.Unlock()
			a.shed.Add(1)
			return ErrFull
		}
		a.state.Add(minusOneQueued)
	}
	w := &waiter{ready: make(chan struct{}), rank: rank}
	a.queue.push(w)
	a.state.Add(oneQueued)
	a.grant() // a slot freed since TryAcquireAs, or one this rank may take past worse waiters
	granted := w.granted
	a.qmu.Unlock()
	if granted {
		return a.woken(w)
	}

	var expired <-chan time.Time
	if a.c.MaxWait > 0 {
		t := time.NewTimer(a.c.MaxWait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-w.ready:
		return a.woken(w)
	case <-ctx.Done():
		if a.withdraw(w) {
			if w.evicted {
				a.shed.Add(1)
				return ErrFull
			}
			a.Release() // granted as ctx ended: pass it on
		}
		a.canceled.Add(1)
		return context.Cause(ctx)
	case <-expired:
		if a.withdraw(w) {
			return a.woken(w) // granted (or evicted) as MaxWait ran out
		}
		a.timedOut.Add(1)
		return ErrQueueTimeout
	}
}

// woken reports the end of a wait whose waiter was granted or evicted.
func (a *Adaptive) woken(w *waiter) error {
	if w.evicted {
		a.shed.Add(1)
		return ErrFull
	}
	a.acquired.add()
	a.waited.Add(1)
	return nil
}

// withdraw takes w out of the queue, or reports that it was granted or
// evicted first.
func (a *Adaptive) withdraw(w *waiter) (done bool) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if w.granted || w.evicted {
		return true
	}
	a.queue.remove(w)
	a.state.Add(minusOneQueued)
	return false
}

// Release gives back a slot without a latency sample: an attempt that was
// abandoned or never sent. It panics if no slot is held.
func (a *Adaptive) Release() {
	if freeSlot(&a.state) {
		return
	}
	a.qmu.Lock()
	if !freeLocked(&a.state) {
		a.qmu.Unlock()
		panic(errUnpaired)
	}
	a.grant()
	a.qmu.Unlock()
}

// ReleaseAt gives back a slot at now (zero: the clock), reporting the
// attempt's latency and whether the dependency signalled overload — a
// 429, 503 or 529, or a timeout. recoil's engine calls it for a Policy
// whose Limiter is an Adaptive; call it yourself when you drive the
// limiter by hand. A latency of zero or less is no sample: the slot is
// freed and only overload counts. It panics if no slot is held.
func (a *Adaptive) ReleaseAt(now time.Time, latency time.Duration, overload bool) {
	if latency > 0 || overload {
		a.sample(now, latency, overload)
	}
	a.Release()
}

// sample adds one attempt to the window, after moving the limit if the
// window it would have joined is over: a sample at or past the window's
// end opens the next one. Of the callers that find the window over, the
// one whose compare-and-swap moves its start closes it; the others add
// their samples to the next. Closing takes the estimator's lock, which
// the queue never holds, so a window closes on time however many callers
// are queueing, and then the queue's lock only if someone is queued.
func (a *Adaptive) sample(now time.Time, latency time.Duration, overload bool) {
	ns := unixNs(now)
	switch from := a.wfrom.Load(); {
	case from == neverNs:
		a.wfrom.CompareAndSwap(neverNs, ns)
	case ns-from >= int64(a.c.Window) && a.wfrom.CompareAndSwap(from, ns):
		a.emu.Lock()
		a.close(ns)
		a.emu.Unlock()
		if queued(a.state.Load()) != 0 {
			a.qmu.Lock()
			a.grant() // a raised limit lets waiters in
			a.qmu.Unlock()
		}
	}
	d := uint64(1)
	if overload {
		d += 1 << 32
	}
	a.wn.Add(d)
	if latency > 0 {
		a.wsum.Add(int64(latency))
	}
	if held := inUse(a.state.Load()); held > a.wpeak.Load() {
		a.wpeak.Store(held) // a racy maximum is enough to tell idle from busy
	}
}

// close ends the window at now, whose start the caller has just moved
// there, and moves the limit; a.emu must be held.
func (a *Adaptive) close(now int64) {
	n := a.wn.Swap(0)
	sum := float64(a.wsum.Swap(0))
	peak := float64(a.wpeak.Swap(0))
	samples, overloads := n&inUseMask, n>>32
	limit := a.est
	switch {
	case overloads > 0:
		limit *= a.c.Decrease
	case samples > 0:
		g := 1.0
		if samples >= uint64(a.c.WindowSamples) && sum > 0 {
			short := sum / float64(samples)
			a.short = short
			a.mins.add(now, short, a.bucket())
			if a.base == 0 || peak <= a.basePeak || now-a.baseAt > 10*int64(a.c.LongWindow) {
				a.base, a.basePeak, a.baseAt = short, peak, now
			}
			a.warm++
			if a.warm > a.c.Warmup {
				long := min(a.mins.min(now, a.bucket()), a.base)
				g = min(max(a.c.Tolerance*long/short, minGradient), 1)
			}
		}
		target := limit*g + math.Sqrt(limit)
		if target > limit && peak < limit/2 {
			target = limit // idle: a limit nobody reaches is not raised
		}
		if target < limit {
			limit += a.c.Smoothing * (target - limit)
		} else {
			limit = target
		}
	}
	a.est = min(max(limit, float64(a.c.Min)), float64(a.c.Max))
	a.setCeilings()
}

// bucket is the width of one bucket of the windowed minimum, in ns.
func (a *Adaptive) bucket() int64 { return max(int64(a.c.LongWindow)/longBuckets, 1) }

// setCeilings publishes the limit to TryAcquireAs: each rank's ceiling;
// a.emu must be held, or a not yet shared.
func (a *Adaptive) setCeilings() {
	l := math.Floor(a.est)
	for r := range a.ceil {
		c := l
		if r >= 2 && a.c.Reserve > 0 {
			c = max(math.Floor(l*(1-a.c.Reserve*float64(r-1))), 1)
		}
		a.ceil[r].Store(uint64(c))
	}
}

// grant hands free slots to the best-ranked waiters while their rank's
// ceiling allows; a.qmu must be held.
func (a *Adaptive) grant() {
	for w := a.queue.first(); w != nil; w = a.queue.first() {
		if inUse(a.state.Load()) >= a.ceil[w.rank].Load() {
			return // the best waiter cannot go, so none may overtake it
		}
		a.state.Add(1 + minusOneQueued) // one queued becomes one in use
		a.queue.grant(w)
	}
}

// unixNs is now in Unix nanoseconds, the clock's when now is zero.
func unixNs(now time.Time) int64 {
	if now.IsZero() {
		now = time.Now()
	}
	return now.UnixNano()
}

// minFilter is a windowed minimum: the least value added in the last few
// buckets of time, each bucket keeping its own least.
type minFilter struct {
	b [longBuckets + 1]struct {
		at int64 // the bucket's index: time ÷ width
		v  float64
	}
	n int
}

// add records v at now, in buckets of width ns.
func (m *minFilter) add(now int64, v float64, width int64) {
	at := now / width
	if m.n > 0 && m.b[m.n-1].at == at {
		m.b[m.n-1].v = min(m.b[m.n-1].v, v)
		return
	}
	if m.n == len(m.b) {
		copy(m.b[:], m.b[1:])
		m.n--
	}
	m.b[m.n].at, m.b[m.n].v = at, v
	m.n++
}

// min returns the least value of the buckets less than longBuckets old at
// now, or +Inf if there is none.
func (m *minFilter) min(now int64, width int64) float64 {
	at, best := now/width, math.Inf(1)
	for i := range m.n {
		if m.b[i].at > at-longBuckets {
			best = min(best, m.b[i].v)
		}
	}
	return best
}

// The state word of an Adaptive: the slots held (low 32 bits) and the
// callers queued (high 32 bits), so that TryAcquireAs and Release see both
// in one atomic word. The queued half changes only under the queue's lock.
const (
	inUseMask      = 1<<32 - 1
	oneQueued      = 1 << 32
	minusOneQueued = ^uint64(oneQueued - 1) // adding it takes one from queued
)

func inUse(s uint64) uint64  { return s & inUseMask }
func queued(s uint64) uint64 { return s >> 32 }

// freeSlot frees a slot of state when no caller is queued, and reports
// whether it did; false leaves the slot held, for the caller to hand off
// under the queue's lock. It panics if no slot is held.
func freeSlot(state *atomic.Uint64) bool {
	for {
		s := state.Load()
		if queued(s) != 0 {
			return false
		}
		if inUse(s) == 0 {
			panic(errUnpaired)
		}
		if state.CompareAndSwap(s, s-1) {
			return true
		}
	}
}

// freeLocked frees a slot of state whose queue is held still by the
// caller's lock, so that only inUse can change; false means no slot was
// held (the caller unlocks and panics).
func freeLocked(state *atomic.Uint64) bool {
	for {
		s := state.Load()
		if inUse(s) == 0 {
			return false
		}
		if state.CompareAndSwap(s, s-1) {
			return true
		}
	}
}
