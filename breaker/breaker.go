package breaker

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// State is where a circuit breaker stands. The zero State is Closed.
type State uint8

const (
	// Closed: attempts go through and their outcomes are counted.
	Closed State = iota
	// Open: attempts are refused (fail fast) until the open period ends.
	Open
	// HalfOpen: a bounded number of probe attempts go through; their outcomes
	// close the breaker or open it again.
	HalfOpen
)

// String returns "closed", "open" or "half-open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Breaker is a circuit breaker: closed, it counts the outcomes of attempts
// and trips open on too many failures; open, it refuses attempts for a
// while; half-open, it lets a few probes through, which close it or open it
// again.
//
// The zero Breaker is usable and has the defaults of Settings{}: it trips
// at DefaultFailureRate over DefaultMinRequests outcomes, or on a run of
// failures scaled to the volume (DefaultRunMargin), stays open for
// DefaultOpenDuration and admits one probe at a time. A Breaker is safe for
// concurrent use and must not be copied after first use.
//
// Every method taking a now reads the clock itself when now is the zero
// time.Time, and only if it needs the time: a closed breaker with only a
// fixed run (ConsecutiveFailures above zero, no rate) never reads the
// clock while it stays closed, and the default breaker reads it only from
// a failure until its window holds none.
//
// No method panics, except with a panic of the OnStateChange hook, which
// passes through to the caller whose change the hook was reporting.
type Breaker struct {
	// word is read on every call: the State in the bits above 32 and, while
	// closed, the run of consecutive failures in the low 32 bits. A closed
	// breaker with no failures is exactly 0, so the healthy path is one
	// load and no store. The state bits change only under mu; the failure
	// count changes by CAS while closed.
	word atomic.Uint64
	// openUntil is when the open period ends, in nanoseconds since epoch.
	// It is written under mu before word says Open, so a reader that sees
	// Open sees this period's end (or a later one).
	openUntil atomic.Int64

	// Set by New and never changed; a zero field means its default.
	failLimit uint32 // consecutive failures that trip
	noConsec  bool   // the consecutive trip is disabled
	openFor   time.Duration
	maxProbes int
	needOK    int
	slowAfter time.Duration // SlowCallThreshold; 0: latency alone is never slow
	win       *rateWindow   // New's window; nil: a fixed run only
	built     bool          // made by New; false: the zero Breaker, whose window is lazy
	lazy      atomic.Pointer[rateWindow]
	// sparse is set for the default trips (Settings that set none): the
	// window counts successes only while it holds a failure, so a
	// dependency that has not failed for a window costs no clock.
	sparse bool
	// lastFail is, for a sparse window, the instant (from epoch) of the
	// latest failure it counted; zero when it holds none.
	lastFail atomic.Int64
	hook     func(from, to State, at time.Time)

	// Keep the lock and the half-open bookkeeping off the cache line the
	// healthy path reads.
	_ [64]byte

	mu        sync.Mutex
	probes    int      // admitted half-open probes whose outcome is not in yet
	probeOK   int      // probe successes in this half-open period
	pending   []change // state changes not yet reported to hook
	spare     []change // pending's previous backing array, for reuse
	notifying bool     // a goroutine is calling hook; others only queue
}

const (
	stateShift = 32
	failMask   = 1<<stateShift - 1
)

func stateOf(w uint64) State { return State(w >> stateShift) }

func word(s State) uint64 { return uint64(s) << stateShift }

// change is a state change waiting to be reported to the hook.
type change struct {
	from, to State
	at       time.Time
}

// epoch anchors the breaker's int64 instants; it is set once, at start-up. time.Time.Sub uses the
// monotonic clock when both times carry it, so open periods measured from
// clock readings do not stretch or shrink when the wall clock is stepped.
// It is the whole wall-clock hour before the process started (Add keeps
// the monotonic reading, Truncate would drop it), so failure-rate buckets
// whose width divides an hour start at the same instants in every run: a
// simulation with explicit instants is reproducible.
var epoch = func() time.Time {
	now := time.Now()
	return now.Add(-time.Duration(now.UnixNano() % int64(time.Hour)))
}()

// instant returns now, or the clock's reading if now is zero, with its
// offset from epoch in nanoseconds.
func instant(now time.Time) (time.Time, int64) {
	if now.IsZero() {
		now = time.Now()
	}
	return now, int64(now.Sub(epoch))
}

// Allow is shorthand for AllowAt(time.Time{}): the clock is read only if
// the breaker needs it.
func (b *Breaker) Allow() bool { return b.AllowAt(time.Time{}) }

// AllowAt reports whether an attempt may go ahead at now; false means the
// circuit is open (or half-open with every probe slot taken) and the caller
// should fail fast. A zero now means the current time, read only when the
// breaker is open.
//
// Every attempt AllowAt admits must have its outcome reported by RecordAt,
// Ignored if it says nothing about the dependency: in the half-open state
// an admitted attempt holds a probe slot until then.
//
// When the open period has ended (at exactly the instant it ends, not
// after), AllowAt turns the breaker half-open and admits the first probe.
func (b *Breaker) AllowAt(now time.Time) bool {
	if b.word.Load() < word(Open) { // closed: one load, no clock
		return true
	}
	return b.allowSlow(now)
}

func (b *Breaker) allowSlow(now time.Time) bool {
	switch stateOf(b.word.Load()) {
	case Closed:
		return true
	case Open:
		var t int64
		now, t = instant(now)
		if t < b.openUntil.Load() {
			return false // fail fast without the lock
		}
	}
	b.mu.Lock()
	ok := false
	switch stateOf(b.word.Load()) {
	case Closed:
		ok = true
	case Open:
		var t int64
		now, t = instant(now)
		if t >= b.openUntil.Load() {
			b.setLocked(HalfOpen, now, t)
			ok = b.takeProbeLocked()
		}
	case HalfOpen:
		ok = b.takeProbeLocked()
	}
	b.unlock()
	return ok
}

func (b *Breaker) takeProbeLocked() bool {
	if b.probes >= b.probeLimit() {
		return false
	}
	b.probes++
	return true
}

// Record is shorthand for RecordAt(time.Time{}, o): the clock is read only
// if the breaker needs it.
func (b *Breaker) Record(o Outcome) { b.RecordAt(time.Time{}, o) }

// RecordAt reports the outcome of an attempt that AllowAt admitted, as of
// now. A zero now means the current time, read only when the outcome trips
// or reopens the breaker, or when a FailureRate or SlowCallRate is set.
//
// Closed, a Failure extends the run of consecutive failures and a Success
// ends it; either goes into the failure-rate window if there is one.
// Half-open, the outcome settles one probe: a Success counts toward
// SuccessThreshold, a Failure opens the breaker for a fresh OpenDuration,
// and every outcome frees the probe's slot. Open, outcomes are dropped:
// they belong to attempts admitted before the breaker opened.
//
// Ignored counts for nothing (it neither extends nor ends a run of
// failures) but frees a half-open probe slot; an Outcome other than
// Success and Failure is treated as Ignored.
//
// RecordAt cannot tell which AllowAt an outcome answers, so an attempt
// admitted while closed that reports while half-open is taken for a probe
// if a probe is outstanding, and dropped if none is.
func (b *Breaker) RecordAt(now time.Time, o Outcome) {
	if o == Success && b.word.Load() == 0 && (b.built && b.win == nil || b.sparseQuiet()) {
		return // closed, no failure in the run or the window: nothing to write
	}
	b.recordSlow(now, o)
}

// recordSlow is RecordAt past the healthy path. It is kept out of line so
// that RecordAt stays within the inliner's budget: a caller's healthy path
// is then the check alone, with no call.
//
//go:noinline
func (b *Breaker) recordSlow(now time.Time, o Outcome) { b.record(now, o, false) }

// WantsLatency reports whether the breaker judges latencies: whether it
// has a SlowCallThreshold. A recoil.Policy times its attempts only for a
// breaker that does, so a breaker without one costs no clock reading.
func (b *Breaker) WantsLatency() bool { return b.slowAfter > 0 }

// RecordLatencyAt is RecordAt for an attempt that took latency: with a
// SlowCallThreshold, an attempt slower than it (strictly) is a slow call
// as well as its outcome, whether it succeeded or failed. Closed, a slow
// call goes into the window beside its outcome and may trip the breaker
// on SlowCallRate; half-open, a slow probe opens the breaker again as a
// failed one does (a dependency still slow has not recovered); open, it
// is dropped like any outcome. Without a SlowCallThreshold, or for an
// Ignored outcome, it is RecordAt. A recoil.Policy calls it for every
// attempt when its Breaker has it and WantsLatency says so, with the
// attempt's latency.
func (b *Breaker) RecordLatencyAt(now time.Time, o Outcome, latency time.Duration) {
	if b.slowAfter == 0 || latency <= b.slowAfter {
		b.RecordAt(now, o)
		return
	}
	b.record(now, o, true)
}

// RecordSlowAt reports, as of now, that a call whose outcome is recorded
// apart turned out slow in a way its latency did not show: a stream whose
// first content came late, or whose content came too slowly, as
// recoilhttp.Transport measures it. It counts one slow call and no
// outcome, so the report may come before the outcome or long after it;
// the rate is judged at the report, over the outcomes the window holds
// then (a report that comes first is judged without its own outcome, as
// a success that completes MinRequests leaves the trip to the next slow
// call). Closed, it goes into the window and may trip the breaker on
// SlowCallRate; half-open, it opens the
// breaker again, as a slow probe would, without freeing a probe slot (it
// is not an outcome); open, it is dropped. Without a SlowCallRate it does
// nothing. A zero now means the current time, read only when a
// SlowCallRate is set.
func (b *Breaker) RecordSlowAt(now time.Time) {
	win := b.window()
	if win == nil || win.slow == nil {
		return
	}
	switch stateOf(b.word.Load()) {
	case Closed:
		var t int64
		now, t = instant(now)
		if win.addSlowSignal(t) {
			b.trip(now, t)
		}
	case HalfOpen:
		now, t := instant(now)
		b.mu.Lock()
		if stateOf(b.word.Load()) == HalfOpen {
			b.setLocked(Open, now, t)
		}
		b.unlock()
	}
}

// record is RecordAt with slow set for a slow call (only with a window
// that counts slow calls).
func (b *Breaker) record(now time.Time, o Outcome, slow bool) {
	if o != Success && o != Failure {
		o, slow = Ignored, false
	}
	switch stateOf(b.word.Load()) {
	case Closed:
		if o != Ignored {
			b.recordClosed(now, o, slow)
		}
	case HalfOpen:
		if slow {
			o = Failure // a slow probe: the dependency has not recovered
		}
		b.recordProbe(now, o)
	}
	// Open: the attempt was admitted before the breaker opened.
}

// trip opens a closed breaker at now (t is its offset from epoch).
func (b *Breaker) trip(now time.Time, t int64) {
	b.mu.Lock()
	if stateOf(b.word.Load()) == Closed {
		b.setLocked(Open, now, t)
	}
	b.unlock()
}

func (b *Breaker) recordClosed(now time.Time, o Outcome, slow bool) {
	trip := false
	var run uint32 // the run of failures this failure made, if it counts
	for {
		w := b.word.Load()
		if stateOf(w) != Closed {
			return
		}
		var next uint64
		if o == Success {
			if w == 0 {
				break
			}
			next = 0
		} else {
			if w&failMask == failMask {
				break // saturated (only when the run trip is off)
			}
			next = w + 1
		}
		if b.word.CompareAndSwap(w, next) {
			if o == Failure && !b.noConsec {
				run = uint32(next)
				trip = b.failLimit > 0 && run >= b.failLimit
			}
			break
		}
	}
	if win := b.window(); win != nil {
		var t int64
		now, t = instant(now)
		if b.skipSuccess(win, t, o, slow) {
			return
		}
		if win.add(t, o == Failure, slow) {
			trip = true
		}
		if !trip && b.scaledRun() && run > DefaultRunMargin {
			trip = run >= win.runToTrip(win.bucket(t))
		}
	}
	if trip {
		now, t := instant(now)
		b.trip(now, t)
	}
}

func (b *Breaker) recordProbe(now time.Time, o Outcome) {
	b.mu.Lock()
	if stateOf(b.word.Load()) == HalfOpen && b.probes > 0 {
		b.probes--
		switch o {
		case Success:
			b.probeOK++
			if b.probeOK >= b.successThreshold() {
				b.setLocked(Closed, now, 0)
			}
		case Failure:
			now, t := instant(now)
			b.setLocked(Open, now, t)
		}
	}
	b.unlock()
}

// setLocked moves the breaker to state to at now (t is now's offset from
// epoch, needed only when to is Open) and queues the change for the hook.
// b.mu must be held and to must differ from the current state.
func (b *Breaker) setLocked(to State, now time.Time, t int64) {
	from := stateOf(b.word.Load())
	b.probes, b.probeOK = 0, 0
	switch to {
	case Open:
		until := t + b.openDuration()
		if until < t { // overflow
			until = math.MaxInt64
		}
		b.openUntil.Store(until)
	case Closed:
		if win := b.window(); win != nil {
			win.reset()
		}
	}
	// A plain store is safe: the state bits change only under mu, and a
	// concurrent CAS of the failure count fails against the new word.
	b.word.Store(word(to))
	if b.hook != nil {
		if now.IsZero() {
			now = time.Now()
		}
		b.pending = append(b.pending, change{from, to, now})
	}
}

// unlock releases b.mu, first reporting queued changes to the hook unless
// another goroutine is already doing so (it will report them in order).
func (b *Breaker) unlock() {
	if len(b.pending) == 0 || b.notifying {
		b.mu.Unlock()
		return
	}
	b.notifying = true
	b.drain()
}

// drain calls the hook for every queued change, in order, without holding
// b.mu across the calls. It is entered with b.mu held and b.notifying set,
// and returns with b.mu released.
func (b *Breaker) drain() {
	done := false
	defer func() {
		if !done { // the hook panicked: let the next change report
			b.mu.Lock()
			b.notifying = false
			b.mu.Unlock()
		}
	}()
	for len(b.pending) > 0 {
		batch := b.pending
		b.pending, b.spare = b.spare[:0], nil
		b.mu.Unlock()
		for _, c := range batch {
			b.hook(c.from, c.to, c.at)
		}
		clear(batch)
		b.mu.Lock()
		b.spare = batch[:0]
	}
	b.notifying = false
	done = true
	b.mu.Unlock()
}

// sparseQuiet reports whether the breaker has the default trips and its
// window holds no failure, so that a success need not be counted: one
// load. The zero Breaker has the default trips.
func (b *Breaker) sparseQuiet() bool {
	return (b.sparse || !b.built) && b.lastFail.Load() == 0
}

// skipSuccess keeps a sparse window's lastFail, and reports whether
// outcome o at t is a success it need not count: one that comes a whole
// window after its last failure. While the window holds no failure its
// rates cannot trip, and the volume it would count only dilutes failures
// to come; counting from the first failure on, the failure rate and the
// run's volume read the outcomes since it.
func (b *Breaker) skipSuccess(win *rateWindow, t int64, o Outcome, slow bool) bool {
	if !b.sparse && b.built {
		return false
	}
	if o == Failure {
		v := t
		if v == 0 {
			v = 1 // zero means none
		}
		for {
			last := b.lastFail.Load()
			if last != 0 && last >= v || b.lastFail.CompareAndSwap(last, v) {
				return false
			}
		}
	}
	last := b.lastFail.Load()
	if slow || last == 0 {
		return last == 0 && !slow
	}
	if t-last >= win.span() {
		b.lastFail.CompareAndSwap(last, 0)
		return true
	}
	return false
}
