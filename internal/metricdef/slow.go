package metricdef

import (
	"sync"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
)

// SlowReports counts the calls reported slow to a breaker apart from their
// outcome (breaker.Breaker.RecordSlowAt): the HTTP Transport's streams
// slow to start or to flow.
var SlowReports = Counter{"recoil_breaker_slow_reports_total", "recoil.breaker.slow_reports", "{call}",
	"Calls reported slow to the circuit breaker apart from their outcome: the HTTP Transport's streams slow to start or to flow."}

// Gauge names a gauge both adapters export, read when metrics are
// collected, as Counter names a counter: its Prometheus and OpenTelemetry
// names, its OpenTelemetry unit, its help.
type Gauge = Counter

// The breaker's rate window, read from breaker.Breaker.Counts when
// metrics are collected, by policy.
var (
	// WindowCalls is Counts.Requests.
	WindowCalls = Gauge{"recoil_breaker_window_calls", "recoil.breaker.window.calls", "{call}",
		"Outcomes in the circuit breaker's rate window (0 without a FailureRate or SlowCallRate)."}
	// WindowSlowCalls is Counts.SlowCalls.
	WindowSlowCalls = Gauge{"recoil_breaker_window_slow_calls", "recoil.breaker.window.slow_calls", "{call}",
		"Slow calls in the circuit breaker's rate window: attempts slower than SlowCallThreshold and slow reports (0 without a SlowCallRate)."}
	// SlowCallRate is SlowCalls over Requests, at most 1.
	SlowCallRate = Gauge{"recoil_breaker_slow_call_rate", "recoil.breaker.slow_call_rate", "1",
		"The circuit breaker's slow-call rate: slow calls over outcomes in its window, at most 1; SlowCallRate trips it."}
)

// Window is what the window gauges show of one breaker.
type Window struct {
	Calls, SlowCalls int
	Rate             float64 // SlowCalls/Calls, at most 1; 0 with no calls
}

// Breakers is the breakers an adapter exports the window of, by policy.
// The zero value is empty; it is safe for concurrent use.
type Breakers struct {
	mu   sync.Mutex
	list []namedBreaker
}

type namedBreaker struct {
	policy string
	b      *breaker.Breaker
}

// Add adds b under policy, once: a breaker added again is kept once.
func (bs *Breakers) Add(policy string, b *breaker.Breaker) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, e := range bs.list {
		if e.b == b {
			return
		}
	}
	bs.list = append(bs.list, namedBreaker{policy, b})
}

// Each reads every breaker's window, in the order they were added, and
// passes it to yield, outside bs's lock.
func (bs *Breakers) Each(yield func(policy string, w Window)) {
	bs.mu.Lock()
	list := bs.list[:len(bs.list):len(bs.list)]
	bs.mu.Unlock()
	for _, e := range list {
		c := e.b.Counts()
		w := Window{Calls: c.Requests, SlowCalls: c.SlowCalls}
		if c.Requests > 0 {
			w.Rate = float64(min(c.SlowCalls, c.Requests)) / float64(c.Requests)
		}
		yield(e.policy, w)
	}
}

// Breaker is a *breaker.Breaker as an adapter wraps it: every method
// passes through, and RecordSlowAt counts its report with Slow first. It
// keeps what the breaker is besides a recoil.Breaker — a
// recoil.LatencyBreaker that says whether it WantsLatency, and a breaker
// the HTTP Transport reports slow streams to — so the engine times
// attempts for it exactly as for the breaker itself. Slow must not
// allocate.
type Breaker struct {
	B    *breaker.Breaker
	Slow func()
}

// AllowAt is the breaker's.
func (b *Breaker) AllowAt(now time.Time) bool { return b.B.AllowAt(now) }

// RecordAt is the breaker's.
func (b *Breaker) RecordAt(now time.Time, o breaker.Outcome) { b.B.RecordAt(now, o) }

// RecordLatencyAt is the breaker's.
func (b *Breaker) RecordLatencyAt(now time.Time, o breaker.Outcome, latency time.Duration) {
	b.B.RecordLatencyAt(now, o, latency)
}

// WantsLatency is the breaker's.
func (b *Breaker) WantsLatency() bool { return b.B.WantsLatency() }

// RecordSlowAt counts the report, then gives it to the breaker.
func (b *Breaker) RecordSlowAt(now time.Time) {
	b.Slow()
	b.B.RecordSlowAt(now)
}

// InstrumentBreaker sets p.Breaker, if it is a *breaker.Breaker, to
// wrap's wrapper of it.
func InstrumentBreaker(p *recoil.Policy, wrap func(*breaker.Breaker) recoil.Breaker) {
	if b, ok := p.Breaker.(*breaker.Breaker); ok && b != nil {
		p.Breaker = wrap(b)
	}
}
