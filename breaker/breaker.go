package breaker

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/internal/config"
)

// Defaults for the zero fields of Settings.
const (
	// DefaultConsecutiveFailures trips the breaker on the fifth failure in a
	// row: "after N consecutive failures" with a commonly chosen N.
	DefaultConsecutiveFailures = 5
	// DefaultOpenDuration is how long a tripped breaker fails fast before it
	// lets a probe through: "stop calling for 30 seconds".
	DefaultOpenDuration = 30 * time.Second
	// DefaultWindow is the span of the failure-rate window.
	DefaultWindow = 10 * time.Second
	// DefaultMinRequests is the volume the failure-rate window must hold
	// before its rate can trip the breaker.
	DefaultMinRequests = 20
	// DefaultMaxProbes is how many attempts a half-open breaker lets through
	// at once: one, so a dependency that is still down sees one request per
	// open period from this breaker.
	DefaultMaxProbes = 1
	// DefaultSuccessThreshold is how many probes must succeed to close a
	// half-open breaker: one. Closing early is cheap to undo (a few failures
	// trip it again); staying half-open keeps refusing healthy traffic.
	DefaultSuccessThreshold = 1
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

// Settings configures a Breaker. Every zero field means the documented
// default (sony/gobreaker's Settings convention), so Settings{} is the
// usual breaker: five failures in a row open it for 30 seconds.
type Settings struct {
	// ConsecutiveFailures trips a closed breaker when this many failures
	// arrive in a row (Ignored outcomes neither extend nor break a run).
	// Zero means DefaultConsecutiveFailures; a negative value disables the
	// consecutive trip (use it with FailureRate). New refuses a value above
	// math.MaxUint32.
	ConsecutiveFailures int

	// FailureRate trips a closed breaker when, at a recorded failure, the
	// rolling Window holds at least MinRequests outcomes and the failures
	// among them are at least this fraction (0.5 = 50 %, as resilience4j's
	// failureRateThreshold "equal or greater"). Only a failure is checked:
	// a success cannot raise the rate. Zero (the default) disables the rate
	// trip; New refuses a negative value, one above 1, and NaN.
	//
	// The rate trip reads the clock on every outcome (when given a zero
	// now) and writes a counter, so it costs more than the consecutive
	// trip; see the package documentation.
	FailureRate float64
	// Window is the span of the failure-rate window; zero means
	// DefaultWindow. It is kept as ten buckets of Window/10; the oldest
	// bucket leaves the window whole, so the window covers between 0.9 and
	// 1 times Window. Unused unless FailureRate is set. New refuses a
	// negative value.
	Window time.Duration
	// MinRequests is the number of Success and Failure outcomes the window
	// must hold before its rates (FailureRate, SlowCallRate) can trip the
	// breaker; zero means DefaultMinRequests. Below it no rate trips,
	// however bad. New refuses a negative value.
	MinRequests int

	// SlowCallRate trips a closed breaker when, at a recorded slow call,
	// the rolling Window holds at least MinRequests outcomes and the slow
	// calls among them are at least this fraction (resilience4j's
	// slowCallRateThreshold, "equal or greater"). A slow call is counted
	// whether it succeeded or failed, beside its outcome: the failure rate
	// and the slow-call rate are judged over the same window and volume,
	// and either trips. Zero (the default) disables the slow-call trip;
	// New refuses a negative value, one above 1, and NaN. See the package
	// documentation, "Slow calls".
	SlowCallRate float64
	// SlowCallThreshold is the latency above which RecordLatencyAt counts a
	// call slow (resilience4j's slowCallDurationThreshold: strictly
	// greater). Zero (the default) means no latency is slow by itself, and
	// only RecordSlowAt marks calls slow (a Transport's stream meter, say).
	// New refuses a negative value, and a positive one without a
	// SlowCallRate, which would judge latencies for nothing.
	SlowCallThreshold time.Duration

	// OpenDuration is how long a tripped breaker refuses attempts before it
	// turns half-open; zero means DefaultOpenDuration. A failed probe starts
	// a fresh open period of the same length. New refuses a negative value.
	OpenDuration time.Duration

	// MaxProbes is how many attempts a half-open breaker admits at once;
	// zero means DefaultMaxProbes. A probe's slot is freed when its outcome
	// is recorded, whatever the outcome. New refuses a negative value.
	MaxProbes int
	// SuccessThreshold is how many probe successes close a half-open
	// breaker; zero means DefaultSuccessThreshold. It may exceed MaxProbes:
	// probes then run in turns. Any probe failure opens the breaker again.
	// New refuses a negative value.
	SuccessThreshold int

	// OnStateChange, if not nil, is called after every change of state with
	// the states left and entered and the instant of the change (the now
	// the change was decided at, or the clock's reading for a zero now).
	// It is called outside the breaker's lock, once per change and in the
	// order the changes happened, from the goroutine that made the change
	// or one that made a later change; a slow hook delays that caller. It
	// may call the breaker's methods. It is never called when the state
	// does not change.
	OnStateChange func(from, to State, at time.Time)
}

// Breaker is a circuit breaker: closed, it counts the outcomes of attempts
// and trips open on too many failures; open, it refuses attempts for a
// while; half-open, it lets a few probes through, which close it or open it
// again.
//
// The zero Breaker is usable and has the defaults of Settings{}: it trips
// after DefaultConsecutiveFailures failures in a row, stays open for
// DefaultOpenDuration and admits one probe at a time. A Breaker is safe for
// concurrent use and must not be copied after first use.
//
// Every method taking a now reads the clock itself when now is the zero
// time.Time, and only if it needs the time: a closed breaker without a
// FailureRate or SlowCallRate never reads the clock while it stays closed.
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
	win       *rateWindow   // nil: no failure-rate or slow-call trip
	hook      func(from, to State, at time.Time)

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

// ErrConfig is wrapped by every error New returns: a field of Settings is
// out of range. errors.Is(err, ErrConfig) tests for it; errors.As with a
// *ConfigError names the field.
var ErrConfig = errors.New("breaker: invalid configuration")

// ConfigError reports the Settings field New refused: its Field
// ("Settings.OpenDuration"), the Value refused, what the field accepts
// (Want), and ErrConfig as Err. It is one type shared by the recoil
// packages that validate a configuration (breaker, budget, limit), so
// errors.As with any of their ConfigError types catches each of them.
type ConfigError = config.Error

// Must returns b if err is nil and panics with err otherwise. It wraps a
// call of New with literal Settings, where a refusal is a programming
// error:
//
//	var payments = breaker.Must(breaker.New(breaker.Settings{OpenDuration: time.Minute}))
func Must(b *Breaker, err error) *Breaker { return config.Must(b, err) }

// New returns a closed Breaker configured by s; zero fields mean the
// defaults documented on Settings. It refuses, with a *ConfigError
// wrapping ErrConfig:
//
//   - ConsecutiveFailures above math.MaxUint32 (a negative value is valid:
//     it disables the consecutive trip);
//   - FailureRate or SlowCallRate below 0, above 1, or NaN;
//   - Window, MinRequests, SlowCallThreshold, OpenDuration, MaxProbes or
//     SuccessThreshold below 0;
//   - SlowCallThreshold above 0 with SlowCallRate 0.
func New(s Settings) (*Breaker, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	b := &Breaker{hook: s.OnStateChange}
	if s.ConsecutiveFailures < 0 {
		b.noConsec = true
	} else {
		b.failLimit = uint32(s.ConsecutiveFailures)
	}
	b.openFor = s.OpenDuration
	b.maxProbes = s.MaxProbes
	b.needOK = s.SuccessThreshold
	b.slowAfter = s.SlowCallThreshold
	if s.FailureRate > 0 || s.SlowCallRate > 0 {
		w, n := s.Window, s.MinRequests
		if w == 0 {
			w = DefaultWindow
		}
		if n == 0 {
			n = DefaultMinRequests
		}
		b.win = newWindow(w, s.FailureRate, s.SlowCallRate, n)
	}
	return b, nil
}

// validate returns the error refusing the first field of s out of range.
func (s *Settings) validate() error {
	bad := func(field string, value any, want string) error {
		return &ConfigError{Field: "Settings." + field, Value: value, Want: want, Err: ErrConfig}
	}
	const nonNegative = "0 (the default) or more"
	switch {
	case int64(s.ConsecutiveFailures) > math.MaxUint32:
		return bad("ConsecutiveFailures", s.ConsecutiveFailures, "at most 4294967295")
	case !(s.FailureRate >= 0 && s.FailureRate <= 1): // true for NaN
		return bad("FailureRate", s.FailureRate, "0 (off) to 1")
	case s.Window < 0:
		return bad("Window", s.Window, nonNegative)
	case s.MinRequests < 0:
		return bad("MinRequests", s.MinRequests, nonNegative)
	case !(s.SlowCallRate >= 0 && s.SlowCallRate <= 1):
		return bad("SlowCallRate", s.SlowCallRate, "0 (off) to 1")
	case s.SlowCallThreshold < 0:
		return bad("SlowCallThreshold", s.SlowCallThreshold, nonNegative)
	case s.SlowCallThreshold > 0 && s.SlowCallRate == 0:
		return bad("SlowCallRate", s.SlowCallRate, "above 0 when SlowCallThreshold is set")
	case s.OpenDuration < 0:
		return bad("OpenDuration", s.OpenDuration, nonNegative)
	case s.MaxProbes < 0:
		return bad("MaxProbes", s.MaxProbes, nonNegative)
	case s.SuccessThreshold < 0:
		return bad("SuccessThreshold", s.SuccessThreshold, nonNegative)
	}
	return nil
}

func (b *Breaker) limit() uint32 {
	if b.failLimit == 0 {
		return DefaultConsecutiveFailures
	}
	return b.failLimit
}

func (b *Breaker) openDuration() int64 {
	if b.openFor == 0 {
		return int64(DefaultOpenDuration)
	}
	return int64(b.openFor)
}

func (b *Breaker) probeLimit() int {
	if b.maxProbes == 0 {
		return DefaultMaxProbes
	}
	return b.maxProbes
}

func (b *Breaker) successThreshold() int {
	if b.needOK == 0 {
		return DefaultSuccessThreshold
	}
	return b.needOK
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
	if o == Success && b.win == nil && b.word.Load() == 0 {
		return // closed with no failures: nothing to write
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
	win := b.win
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
				break // saturated (only when the consecutive trip is off)
			}
			next = w + 1
		}
		if b.word.CompareAndSwap(w, next) {
			trip = o == Failure && !b.noConsec && uint32(next) >= b.limit()
			break
		}
	}
	if win := b.win; win != nil {
		var t int64
		now, t = instant(now)
		if win.add(t, o == Failure, slow) {
			trip = true
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
		if b.win != nil {
			b.win.reset()
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

// State is shorthand for StateAt(time.Time{}).
func (b *Breaker) State() State { return b.StateAt(time.Time{}) }

// StateAt returns the breaker's state at now. Like AllowAt, it turns an
// open breaker whose open period has ended half-open (calling the hook),
// so the states it reports are the states the breaker goes through. A zero
// now means the current time, read only when the breaker is open.
func (b *Breaker) StateAt(now time.Time) State {
	s := stateOf(b.word.Load())
	if s != Open {
		return s
	}
	now, t := instant(now)
	if t < b.openUntil.Load() {
		return Open
	}
	b.mu.Lock()
	b.expireLocked(now, t)
	s = stateOf(b.word.Load())
	b.unlock()
	return s
}

func (b *Breaker) expireLocked(now time.Time, t int64) {
	if stateOf(b.word.Load()) == Open && t >= b.openUntil.Load() {
		b.setLocked(HalfOpen, now, t)
	}
}

// Counts is a snapshot of a Breaker for metrics. Fields that do not apply
// to State are zero.
type Counts struct {
	// State is the breaker's state.
	State State
	// ConsecutiveFailures is the current run of failures (closed only).
	ConsecutiveFailures int
	// Requests and Failures are the Success and Failure outcomes in the
	// rate window ending now (zero without a FailureRate or SlowCallRate;
	// kept while open, emptied when the breaker closes).
	Requests, Failures int
	// SlowCalls is the slow calls in the same window (zero without a
	// SlowCallRate): RecordLatencyAt's attempts slower than
	// SlowCallThreshold and RecordSlowAt's reports. It may exceed
	// Requests when slow reports outlive their calls' outcomes in the
	// window; the slow-call rate counts at most Requests.
	SlowCalls int
	// OpenUntil is when the open period ends (open only).
	OpenUntil time.Time
	// Probes is the number of admitted probes not yet reported, and
	// ProbeSuccesses the probe successes so far (half-open only).
	Probes, ProbeSuccesses int
}

// Counts is shorthand for CountsAt(time.Time{}).
func (b *Breaker) Counts() Counts { return b.CountsAt(time.Time{}) }

// CountsAt returns a snapshot of the breaker at now. Like StateAt, it turns
// an open breaker whose period has ended half-open. The window's counters
// are read one at a time without the lock, so under concurrent use they
// may be a few outcomes apart. A zero now means the current time, read
// only when the breaker is open or has a FailureRate.
func (b *Breaker) CountsAt(now time.Time) Counts {
	var t int64
	timed := false
	if b.win != nil || stateOf(b.word.Load()) == Open {
		now, t = instant(now)
		timed = true
	}
	b.mu.Lock()
	if stateOf(b.word.Load()) == Open {
		if !timed { // opened since the check above
			now, t = instant(now)
		}
		b.expireLocked(now, t)
	}
	w := b.word.Load()
	c := Counts{State: stateOf(w)}
	switch c.State {
	case Closed:
		c.ConsecutiveFailures = int(w & failMask)
	case Open:
		c.OpenUntil = epoch.Add(time.Duration(b.openUntil.Load()))
	case HalfOpen:
		c.Probes, c.ProbeSuccesses = b.probes, b.probeOK
	}
	b.unlock()
	if b.win != nil {
		c.Requests, c.Failures, c.SlowCalls = b.win.sum(b.win.bucket(t))
	}
	return c
}
