// Package metricdef holds what recoil's two metrics adapters, recoilotel and
// recoilprom, must agree on so their metrics mean the same: the label values
// for an attempt's outcome and a call's stop reason, the breaker state's
// number, the histogram buckets, the check on a policy's name, the fleet
// fallback metric, the hedging and Fallback metrics with their bounded
// target and why labels (fallback.go), and the chaining of a policy's
// hooks.
package metricdef

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
)

// Outcome labels: OutcomeSuccess, then one per failure class in Class order.
const OutcomeSuccess = "success"

// NumOutcomes is the number of outcome labels Outcome returns for the known
// classes.
const NumOutcomes = 1 + int(recoil.ClassCanceled) + 1

// OutcomeIndex is the index of e's outcome among Outcomes, or -1 for a class
// recoil does not define.
func OutcomeIndex(e recoil.AttemptEvent) int {
	if succeeded(e) {
		return 0
	}
	if c := int(e.Verdict.Class); c <= int(recoil.ClassCanceled) {
		return 1 + c
	}
	return -1
}

// Outcome is the outcome label of the attempt e reports: "success", or its
// failure's class ("transient", "throttled", "overloaded", "permanent",
// "canceled").
func Outcome(e recoil.AttemptEvent) string {
	if succeeded(e) {
		return OutcomeSuccess
	}
	return e.Verdict.Class.String()
}

// succeeded reports whether e is a success: no error and no verdict. An
// attempt a hedge abandoned because another answered first comes with no
// error but a ClassCanceled verdict; it is canceled, not a success.
func succeeded(e recoil.AttemptEvent) bool {
	return e.Err == nil && e.Verdict.Class == recoil.ClassUnknown
}

// Outcomes returns every outcome label, in OutcomeIndex order.
func Outcomes() []string {
	out := make([]string, NumOutcomes)
	out[0] = OutcomeSuccess
	for c := recoil.ClassUnknown; c <= recoil.ClassCanceled; c++ {
		out[1+int(c)] = c.String()
	}
	return out
}

// NumReasons is the number of stop reasons recoil defines, ReasonNone
// included.
const NumReasons = int(recoil.ReasonNoTarget) + 1

// Reasons returns every stop reason's label (Reason.String), indexed by
// Reason.
func Reasons() []string {
	out := make([]string, NumReasons)
	for r := range out {
		out[r] = recoil.Reason(r).String()
	}
	return out
}

// States is every breaker state, in the order of their numbers (StateValue).
var States = [...]breaker.State{breaker.Closed, breaker.HalfOpen, breaker.Open}

// StateValue is the number the breaker-state gauge shows for s: 0 closed,
// 1 half-open, 2 open, so that higher is worse and "> 0" means "not closed".
// An unknown state reads as open.
func StateValue(s breaker.State) int {
	switch s {
	case breaker.Closed:
		return 0
	case breaker.HalfOpen:
		return 1
	}
	return 2
}

// Histogram bucket boundaries, shared by both adapters.
var (
	// RetryBuckets are for retries per call: small whole numbers, since a
	// policy allows a handful (gRFC A6 caps attempts at 5).
	RetryBuckets = []float64{0, 1, 2, 3, 4, 5, 10}
	// DelayBuckets, in seconds, are for a call's total wait and for each
	// wait: from a backoff's first 100 ms to a server-directed wait of
	// minutes.
	DelayBuckets = []float64{0, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	// QueueWaitBuckets, in seconds, are for a limiter's queue.
	QueueWaitBuckets = []float64{0, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// MaxPolicyLen bounds a policy name.
const MaxPolicyLen = 64

// ErrPolicyName is returned for a policy name that is not a short name.
var ErrPolicyName = errors.New("policy name must be 1 to 64 letters, digits, '_', '-' or '.' (a dependency's name, never a URL or a key)")

// CheckPolicy reports whether name may label a policy's metrics: a short
// name of letters, digits, '_', '-' and '.', so a URL, a path or a key
// passed by mistake is refused rather than exported as a label of
// unbounded cardinality.
func CheckPolicy(name string) error {
	if !shortName(name) {
		return ErrPolicyName
	}
	return nil
}

// shortName reports whether name is 1 to MaxPolicyLen letters, digits, '_',
// '-' and '.'.
func shortName(name string) bool {
	if name == "" || len(name) > MaxPolicyLen {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) < 0
}

// The fleet fallback metric: the calls a fleet.Client made to Redis that
// ended in a decision from the local share, by cause, read from the
// Client's Fallbacks when metrics are collected. The adapters take the
// Client through an interface of that one method, so neither imports the
// fleet module (and go-redis with it).
const (
	// FleetFallbacksProm is the Prometheus counter's name.
	FleetFallbacksProm = "recoil_fleet_fallbacks_total"
	// FleetFallbacksOTel is the OpenTelemetry counter's name; its
	// Prometheus exporter derives FleetFallbacksProm from it.
	FleetFallbacksOTel = "recoil.fleet.fallbacks"
	// FleetFallbacksUnit is the OpenTelemetry counter's unit.
	FleetFallbacksUnit = "{call}"
	// FleetFallbacksHelp describes the counter in both adapters.
	FleetFallbacksHelp = "Calls to Redis by a fleet client that ended in a decision from the local share, by cause: unreachable (no answer in time; Redis was marked down) or refused (Redis answered with an error reply, so a healthy Redis was bypassed)."

	// CauseUnreachable labels the calls that got no answer in time.
	CauseUnreachable = "unreachable"
	// CauseRefused labels the calls Redis answered with an error reply.
	CauseRefused = "refused"
)

// ErrFleetName is returned for a fleet name that is not a short name.
var ErrFleetName = errors.New("fleet name must be 1 to 64 letters, digits, '_', '-' or '.' (a name for the fleet client, never a Redis address or a key)")

// CheckFleet reports whether name may label a fleet client's metrics: a
// short name, as CheckPolicy requires of a policy's.
func CheckFleet(name string) error {
	if !shortName(name) {
		return ErrFleetName
	}
	return nil
}

// FleetCounter is what the adapters read a fleet client's fallbacks from;
// *fleet.Client has the method.
type FleetCounter interface {
	Fallbacks() (unreachable, refused uint64)
}

// ErrFleetDuplicate is returned for a fleet name already added.
var ErrFleetDuplicate = errors.New("a fleet client of that name is already exported")

// ErrFleetNil is returned for a nil FleetCounter.
var ErrFleetNil = errors.New("nil fleet client")

// Fleets is the fleet clients an adapter exports, by name. The zero Fleets
// is empty and ready; it is safe for concurrent use.
type Fleets struct {
	mu   sync.Mutex
	list []fleet
}

type fleet struct {
	name string
	c    FleetCounter
}

// Add adds c under name, which must pass CheckFleet and not be in f yet.
func (f *Fleets) Add(name string, c FleetCounter) error {
	if err := CheckFleet(name); err != nil {
		return err
	}
	if c == nil {
		return ErrFleetNil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.list {
		if e.name == name {
			return ErrFleetDuplicate
		}
	}
	f.list = append(f.list, fleet{name, c})
	return nil
}

// Each reads every fleet client's counts, in the order they were added,
// and passes them to yield. The counts are read outside f's lock, so a
// slow or re-entrant Fallbacks blocks no Add.
func (f *Fleets) Each(yield func(name string, unreachable, refused uint64)) {
	f.mu.Lock()
	list := f.list[:len(f.list):len(f.list)]
	f.mu.Unlock()
	for _, e := range list {
		u, r := e.c.Fallbacks()
		yield(e.name, u, r)
	}
}

// Chain returns a hook that calls first, when set, and then next.
func Chain[E any](first, next func(context.Context, E)) func(context.Context, E) {
	if first == nil {
		return next
	}
	return func(ctx context.Context, e E) {
		first(ctx, e)
		next(ctx, e)
	}
}

// Instrument sets p's Observe and OnAttempt to observe and onAttempt, after
// the hooks p already has, and wraps p.Limiter, if set, with limiter.
func Instrument(p *recoil.Policy, observe func(context.Context, recoil.Summary), onAttempt func(context.Context, recoil.AttemptEvent), limiter func(recoil.Limiter) recoil.Limiter) {
	p.Observe = Chain(p.Observe, observe)
	p.OnAttempt = Chain(p.OnAttempt, onAttempt)
	if p.Limiter != nil {
		p.Limiter = Keep(p.Limiter, limiter)
	}
}

// Keep returns l wrapped by wrap (an adapter's queue-wait recorder) and
// still what l was besides a Limiter: a recoil.LatencyLimiter is still told
// each attempt's latency, and a recoil.PriorityLimiter still queues by
// priority — its waits recorded by the wrapper's Acquire, which is handed
// the priority in its context. A wrapper that hid them would leave an
// adaptive limiter without the latencies it moves by, and the engine would
// not time attempts for a plain one either.
func Keep(l recoil.Limiter, wrap func(recoil.Limiter) recoil.Limiter) recoil.Limiter {
	ll, lat := l.(recoil.LatencyLimiter)
	pl, pri := l.(recoil.PriorityLimiter)
	if !lat && !pri {
		return wrap(l)
	}
	k := kept{ll: ll, pl: pl}
	if pri {
		k.Limiter = wrap(ranked{pl})
	} else {
		k.Limiter = wrap(l)
	}
	switch {
	case lat && pri:
		return &keptBoth{k}
	case lat:
		return &keptLatency{k}
	}
	return &keptPriority{k}
}

// kept is a wrapped limiter and the optional interfaces of the limiter it
// wraps.
type kept struct {
	recoil.Limiter // the wrapper: TryAcquire, Acquire (recorded), Release
	ll             recoil.LatencyLimiter
	pl             recoil.PriorityLimiter
}

func (k *kept) releaseAt(now time.Time, latency time.Duration, overload bool) {
	k.ll.ReleaseAt(now, latency, overload)
}

func (k *kept) tryAcquireAs(p recoil.Priority, retry bool) bool { return k.pl.TryAcquireAs(p, retry) }

// acquireAs waits through the wrapper, so the wait is recorded, with the
// priority in the context for ranked to pass on.
func (k *kept) acquireAs(ctx context.Context, p recoil.Priority, retry bool) error {
	return k.Limiter.Acquire(context.WithValue(ctx, rankKey{}, rank{p, retry}))
}

type keptLatency struct{ kept }

func (k *keptLatency) ReleaseAt(now time.Time, latency time.Duration, overload bool) {
	k.releaseAt(now, latency, overload)
}

type keptPriority struct{ kept }

func (k *keptPriority) TryAcquireAs(p recoil.Priority, retry bool) bool {
	return k.tryAcquireAs(p, retry)
}
func (k *keptPriority) AcquireAs(ctx context.Context, p recoil.Priority, retry bool) error {
	return k.acquireAs(ctx, p, retry)
}

type keptBoth struct{ kept }

func (k *keptBoth) ReleaseAt(now time.Time, latency time.Duration, overload bool) {
	k.releaseAt(now, latency, overload)
}
func (k *keptBoth) TryAcquireAs(p recoil.Priority, retry bool) bool {
	return k.tryAcquireAs(p, retry)
}
func (k *keptBoth) AcquireAs(ctx context.Context, p recoil.Priority, retry bool) error {
	return k.acquireAs(ctx, p, retry)
}

// rankKey carries an attempt's priority from kept.acquireAs, through the
// wrapper's Acquire, to ranked.
type rankKey struct{}

type rank struct {
	p     recoil.Priority
	retry bool
}

// ranked is a PriorityLimiter as a plain Limiter whose Acquire takes the
// priority from its context (the interactive first attempt's when there is
// none), for a wrapper that knows only Acquire.
type ranked struct{ pl recoil.PriorityLimiter }

func (r ranked) TryAcquire() bool { return r.pl.TryAcquire() }
func (r ranked) Release()         { r.pl.Release() }
func (r ranked) Acquire(ctx context.Context) error {
	if k, ok := ctx.Value(rankKey{}).(rank); ok {
		return r.pl.AcquireAs(ctx, k.p, k.retry)
	}
	return r.pl.Acquire(ctx)
}

// Limiter is a recoil.Limiter that times each Acquire, the only place the
// loop waits for a slot.
type Limiter struct {
	L      recoil.Limiter
	Record func(ctx context.Context, seconds float64)
}

// TryAcquire takes a free slot without waiting.
func (l *Limiter) TryAcquire() bool { return l.L.TryAcquire() }

// Acquire waits for a slot and records how long it waited, whether or not
// it got one.
func (l *Limiter) Acquire(ctx context.Context) error {
	start := time.Now()
	err := l.L.Acquire(ctx)
	l.Record(ctx, time.Since(start).Seconds())
	return err
}

// Release returns a slot.
func (l *Limiter) Release() { l.L.Release() }
