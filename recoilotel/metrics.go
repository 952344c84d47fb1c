package recoilotel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/internal/metricdef"
	"github.com/recoil-go/recoil/recoilotel/internal/config"
)

// Attribute keys of recoil's metrics and span events.
const (
	// PolicyKey labels every metric with the policy's name, chosen by the
	// user (Metrics.Policy).
	PolicyKey = attribute.Key("recoil.policy")
	// OutcomeKey is an attempt's outcome: "success", or its failure's class.
	OutcomeKey = attribute.Key("recoil.outcome")
	// ReasonKey is why a call stopped (recoil.Reason.String; "none" for a
	// success).
	ReasonKey = attribute.Key("recoil.reason")
	// StateKey is the breaker state a transition entered.
	StateKey = attribute.Key("recoil.state")
	// FleetKey labels a fleet client's fallbacks with the name given to
	// Metrics.Fleet.
	FleetKey = attribute.Key("recoil.fleet")
	// CauseKey is why a fleet client's decision fell back to the local
	// share: "unreachable" or "refused".
	CauseKey = attribute.Key("recoil.cause")
	// TargetKey is a Fallback's target: its name (Target.Name, or
	// "target N"), cut to 64 bytes; "other" for targets past the first 16
	// a policy reports.
	TargetKey = attribute.Key("recoil.target")
)

// Metrics is recoil's OpenTelemetry instruments, from one meter. Take an
// Observer per policy with Policy, and report each fleet client with
// Fleet. Create it with NewMetrics; the zero Metrics is not usable. It is
// safe for concurrent use.
type Metrics struct {
	attempts    metric.Int64Counter
	retries     metric.Int64Histogram
	delay       metric.Float64Histogram
	waits       metric.Float64Histogram
	stops       metric.Int64Counter
	refusals    metric.Int64Counter
	state       metric.Int64Gauge
	transitions metric.Int64Counter
	queueWait   metric.Float64Histogram
	hedges      metric.Int64Counter
	hedgeRefuse metric.Int64Counter
	wasted      metric.Int64Counter
	tgtAttempts metric.Int64Counter
	fallbacks   metric.Int64Counter
	slowReports metric.Int64Counter
	fleets      *metricdef.Fleets   // read by the fallbacks counter's callback
	breakers    *metricdef.Breakers // read by the window gauges' callback
	targets     *metricdef.PolicyTargets[targetSeries]
}

// NewMetrics creates recoil's instruments with the meter provider of opts
// (WithMeterProvider; the global one by default). Their names follow gRFC
// A96 and the OpenTelemetry naming guidelines; docs/observability.md lists
// them.
func NewMetrics(opts ...Option) (*Metrics, error) {
	meter := config.New(opts).MeterProvider.Meter(config.ScopeName)
	m := Metrics{fleets: new(metricdef.Fleets), breakers: new(metricdef.Breakers), targets: new(metricdef.PolicyTargets[targetSeries])}
	var errs [17]error
	m.attempts, errs[0] = meter.Int64Counter("recoil.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts made, by outcome: success, or the failure's class."))
	m.retries, errs[1] = meter.Int64Histogram("recoil.call.retries", metric.WithUnit("{retry}"),
		metric.WithDescription("Retries per call, the first attempt not counted (gRFC A96 grpc.client.call.retries)."),
		metric.WithExplicitBucketBoundaries(metricdef.RetryBuckets...))
	m.delay, errs[2] = meter.Float64Histogram("recoil.call.retry_delay", metric.WithUnit("s"),
		metric.WithDescription("Total time per call spent waiting between attempts (gRFC A96 grpc.client.call.retry_delay)."),
		metric.WithExplicitBucketBoundaries(metricdef.DelayBuckets...))
	m.waits, errs[3] = meter.Float64Histogram("recoil.retry_wait", metric.WithUnit("s"),
		metric.WithDescription("Each wait before a retry: the backoff's, or the one the server directed."),
		metric.WithExplicitBucketBoundaries(metricdef.DelayBuckets...))
	m.stops, errs[4] = meter.Int64Counter("recoil.stops", metric.WithUnit("{call}"),
		metric.WithDescription("Calls ended, by stop reason (none for a success)."))
	m.refusals, errs[5] = meter.Int64Counter("recoil.budget.refusals", metric.WithUnit("{call}"),
		metric.WithDescription("Calls stopped because a retry budget refused a retry (or the call)."))
	m.state, errs[6] = meter.Int64Gauge("recoil.breaker.state",
		metric.WithDescription("Circuit breaker state: 0 closed, 1 half-open, 2 open."))
	m.transitions, errs[7] = meter.Int64Counter("recoil.breaker.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("Circuit breaker state changes, by the state entered."))
	m.queueWait, errs[8] = meter.Float64Histogram("recoil.limiter.queue_wait", metric.WithUnit("s"),
		metric.WithDescription("Time attempts waited in the concurrency limiter's queue."),
		metric.WithExplicitBucketBoundaries(metricdef.QueueWaitBuckets...))
	_, errs[9] = meter.Int64ObservableCounter(metricdef.FleetFallbacksOTel, metric.WithUnit(metricdef.FleetFallbacksUnit),
		metric.WithDescription(metricdef.FleetFallbacksHelp),
		metric.WithInt64Callback(m.observeFleets))
	m.hedges, errs[10] = counter(meter, metricdef.Hedges)
	m.hedgeRefuse, errs[11] = counter(meter, metricdef.HedgeRefusals)
	m.wasted, errs[12] = counter(meter, metricdef.WastedAttempts)
	m.tgtAttempts, errs[13] = counter(meter, metricdef.TargetAttempts)
	m.fallbacks, errs[14] = counter(meter, metricdef.Fallbacks)
	m.slowReports, errs[15] = counter(meter, metricdef.SlowReports)
	errs[16] = m.windowGauges(meter)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("recoilotel: %w", err)
	}
	return &m, nil
}

// counter creates c's counter with meter.
func counter(meter metric.Meter, c metricdef.Counter) (metric.Int64Counter, error) {
	return meter.Int64Counter(c.OTel, metric.WithUnit(c.Unit), metric.WithDescription(c.Help))
}

// windowGauges creates the gauges of the breakers' rate windows
// (Observer.Breaker), read by one callback as the reader collects.
func (m *Metrics) windowGauges(meter metric.Meter) error {
	gauge := func(g metricdef.Gauge) (metric.Float64ObservableGauge, error) {
		return meter.Float64ObservableGauge(g.OTel, metric.WithUnit(g.Unit), metric.WithDescription(g.Help))
	}
	calls, err1 := gauge(metricdef.WindowCalls)
	slow, err2 := gauge(metricdef.WindowSlowCalls)
	rate, err3 := gauge(metricdef.SlowCallRate)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	_, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		m.breakers.Each(func(policy string, w metricdef.Window) {
			at := metric.WithAttributeSet(attribute.NewSet(PolicyKey.String(policy)))
			o.ObserveFloat64(calls, float64(w.Calls), at)
			o.ObserveFloat64(slow, float64(w.SlowCalls), at)
			o.ObserveFloat64(rate, w.Rate, at)
		})
		return nil
	}, calls, slow, rate)
	return err
}

// observeFleets is the fallbacks counter's callback: it reads each fleet
// client's counts as the reader collects.
func (m *Metrics) observeFleets(_ context.Context, o metric.Int64Observer) error {
	m.fleets.Each(func(name string, unreachable, refused uint64) {
		fleet := FleetKey.String(name)
		o.Observe(toInt64(unreachable), metric.WithAttributeSet(attribute.NewSet(fleet, CauseKey.String(metricdef.CauseUnreachable))))
		o.Observe(toInt64(refused), metric.WithAttributeSet(attribute.NewSet(fleet, CauseKey.String(metricdef.CauseRefused))))
	})
	return nil
}

// toInt64 is n, or the largest int64 for a count beyond it.
func toInt64(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

// FleetCounter is what Fleet reads: the calls a fleet client made to Redis
// that ended in a decision from the process's local share, by cause.
// *fleet.Client (package github.com/recoil-go/recoil/fleet) has the method;
// taking it through this interface keeps that module, and its Redis
// client, out of the builds of recoilotel's users who do not use it.
type FleetCounter interface {
	// Fallbacks returns the calls that got no answer in time and the calls
	// Redis answered with an error reply. Both only grow.
	Fallbacks() (unreachable, refused uint64)
}

// Fleet exports c's fallbacks as recoil.fleet.fallbacks, an asynchronous
// counter with the attributes recoil.fleet=name and recoil.cause=
// "unreachable" or "refused". Its callback reads c's counts each time the
// meter provider's readers collect, so each collection sees them as they
// are then; both series are reported from the first collection, at zero.
// A refused count above zero means decisions fall back while Redis
// answers: a healthy Redis is being bypassed.
//
// name must be 1 to 64 letters, digits, '_', '-' or '.', as a policy's
// name must be, and not already given to Fleet; c must not be nil. There
// is no way to remove a fleet client: export one per Client, for the
// life of the process.
func (m *Metrics) Fleet(name string, c FleetCounter) error {
	if err := m.fleets.Add(name, c); err != nil {
		return fmt.Errorf("recoilotel: fleet %q: %w", name, err)
	}
	return nil
}

// Policy returns the Observer that records the calls of one policy with
// the attribute recoil.policy=name. name must be 1 to 64 letters, digits,
// '_', '-' or '.': a dependency's name, never a URL or a key, so the
// attribute's values stay few.
func (m *Metrics) Policy(name string) (*Observer, error) {
	if err := metricdef.CheckPolicy(name); err != nil {
		return nil, fmt.Errorf("recoilotel: %q: %w", name, err)
	}
	policy := PolicyKey.String(name)
	o := &Observer{m: m, policy: policy}
	for i, outcome := range metricdef.Outcomes() {
		o.attempts[i] = addOpts(policy, OutcomeKey.String(outcome))
	}
	for r, reason := range metricdef.Reasons() {
		o.stops[r] = addOpts(policy, ReasonKey.String(reason))
	}
	o.add = addOpts(policy)
	o.record = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(policy))}
	o.targets = m.targets.For(name, func(target string) *targetSeries {
		tk := TargetKey.String(target)
		ts := &targetSeries{attempts: addOpts(policy, tk)}
		for i, why := range metricdef.Whys() {
			ts.left[i] = addOpts(policy, tk, WhyKey.String(why))
		}
		return ts
	})
	return o, nil
}

// targetSeries is the options that attach one target's attributes, for
// one policy.
type targetSeries struct {
	attempts []metric.AddOption
	left     [metricdef.NumWhys][]metric.AddOption
}

// addOpts builds, once, the options that attach attrs to a measurement:
// passed on every call they cost no allocation.
func addOpts(attrs ...attribute.KeyValue) []metric.AddOption {
	return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
}

// Observer records one policy's calls with Metrics, and marks its waits
// and give-ups as events on the caller's span. Its methods are the policy's
// hooks; Instrument installs them. Get one from Metrics.Policy; the zero
// Observer is not usable. It is safe for concurrent use.
type Observer struct {
	m        *Metrics
	policy   attribute.KeyValue
	attempts [metricdef.NumOutcomes][]metric.AddOption
	stops    [metricdef.NumReasons][]metric.AddOption
	add      []metric.AddOption
	record   []metric.RecordOption
	targets  *metricdef.TargetSeries[targetSeries]
}

// Span event names and their attribute keys.
const (
	// EventRetryWait is added to the caller's span for each wait before a
	// retry, by OnAttempt.
	EventRetryWait = "recoil.retry_wait"
	// EventGiveUp is added to the caller's span when a call gives up, by
	// Observe.
	EventGiveUp = "recoil.give_up"

	// AttemptKey is the number of the attempt that failed (1 is the first).
	AttemptKey = attribute.Key("recoil.attempt")
	// WaitKey is the wait in seconds: the one before the next attempt, or
	// on EventGiveUp the server's wait the call refused.
	WaitKey = attribute.Key("recoil.wait")
	// WaitSourceKey says where a wait came from: "server" (Retry-After and
	// its relatives) or "backoff" (the policy's schedule).
	WaitSourceKey = attribute.Key("recoil.wait.source")
	// ClassKey is the failure's class (recoil.Class.String).
	ClassKey = attribute.Key("recoil.class")
	// CodeKey is the failure's diagnosis code (recoil.Verdict.Code), when set.
	CodeKey = attribute.Key("recoil.code")
	// WhyKey is the verdict's reason, in words (recoil.Verdict.Reason), on
	// the span events. On recoil.fallbacks it is why the call left the
	// target, bounded: one of the reasons recoil's DefaultFallbackRule and
	// Fallback give ("model not found", "overloaded", "cooling down", …),
	// or "other".
	WhyKey = attribute.Key("recoil.why")
	// AttemptsKey is the number of attempts a call made.
	AttemptsKey = attribute.Key("recoil.call.attempts")
)

// Observe records a call's Summary: its retries, its total wait, why it
// stopped, and a budget refusal if that was why; under a Hedge, its
// hedges, refused hedges and wasted attempts; under a Fallback, its
// attempts on each target and each target it left or passed over, and
// why. When the call gave up it adds EventGiveUp to the caller's span. It
// is a Policy.Observe hook.
func (o *Observer) Observe(ctx context.Context, s recoil.Summary) {
	m := o.m
	m.retries.Record(ctx, int64(max(s.Attempts-1, 0)), o.record...)
	m.delay.Record(ctx, s.Waited.Seconds(), o.record...)
	if int(s.Reason) < len(o.stops) {
		m.stops.Add(ctx, 1, o.stops[s.Reason]...)
	} else {
		m.stops.Add(ctx, 1, addOpts(o.policy, ReasonKey.String(s.Reason.String()))...)
	}
	if s.Reason == recoil.ReasonBudget {
		m.refusals.Add(ctx, 1, o.add...)
	}
	if len(s.Targets) > 0 {
		o.observeTargets(ctx, s.Targets)
	}
	if metricdef.Hedged(&s) {
		o.observeHedges(ctx, &s)
	}
	if s.Err == nil || s.Reason == recoil.ReasonNone {
		return
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := []attribute.KeyValue{o.policy, ReasonKey.String(s.Reason.String()), AttemptsKey.Int(s.Attempts)}
		if s.RefusedWait > 0 {
			attrs = append(attrs, WaitKey.Float64(s.RefusedWait.Seconds()))
		}
		span.AddEvent(EventGiveUp, trace.WithAttributes(verdictAttrs(attrs, s.Verdict, s.LastErr != nil)...))
	}
}

// observeTargets records a call's attempts on each target and the targets
// it left.
func (o *Observer) observeTargets(ctx context.Context, ts []recoil.TargetReport) {
	m := o.m
	metricdef.Targets(ts, func(name string, attempts, why int) {
		series := o.targets.Get(name)
		if attempts > 0 {
			m.tgtAttempts.Add(ctx, int64(attempts), series.attempts...)
		}
		if why >= 0 {
			m.fallbacks.Add(ctx, 1, series.left[why]...)
		}
	})
}

// observeHedges records a call's hedges, refused hedges and wasted
// attempts.
func (o *Observer) observeHedges(ctx context.Context, s *recoil.Summary) {
	m := o.m
	if s.Hedges > 0 {
		m.hedges.Add(ctx, int64(s.Hedges), o.add...)
	}
	if s.RefusedHedges > 0 {
		m.hedgeRefuse.Add(ctx, int64(s.RefusedHedges), o.add...)
	}
	if s.Wasted > 0 {
		m.wasted.Add(ctx, int64(s.Wasted), o.add...)
	}
}

// OnAttempt records an attempt by its outcome; for an attempt that will
// be retried, it records the wait and adds EventRetryWait to the caller's
// span. It is a Policy.OnAttempt hook.
func (o *Observer) OnAttempt(ctx context.Context, e recoil.AttemptEvent) {
	m := o.m
	if i := metricdef.OutcomeIndex(e); i >= 0 {
		m.attempts.Add(ctx, 1, o.attempts[i]...)
	} else {
		m.attempts.Add(ctx, 1, addOpts(o.policy, OutcomeKey.String(metricdef.Outcome(e)))...)
	}
	if !e.Retry {
		return
	}
	m.waits.Record(ctx, e.Wait.Seconds(), o.record...)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		source := "backoff"
		if e.Verdict.Wait > 0 {
			source = "server"
		}
		attrs := []attribute.KeyValue{o.policy, AttemptKey.Int(e.Attempt), WaitKey.Float64(e.Wait.Seconds()), WaitSourceKey.String(source)}
		span.AddEvent(EventRetryWait, trace.WithAttributes(verdictAttrs(attrs, e.Verdict, true)...))
	}
}

func verdictAttrs(attrs []attribute.KeyValue, v recoil.Verdict, failed bool) []attribute.KeyValue {
	if !failed {
		return attrs
	}
	attrs = append(attrs, ClassKey.String(v.Class.String()))
	if v.Code != "" {
		attrs = append(attrs, CodeKey.String(v.Code))
	}
	if v.Reason != "" {
		attrs = append(attrs, WhyKey.String(v.Reason))
	}
	return attrs
}

// BreakerHook returns a function for breaker.Settings.OnStateChange that
// records recoil.breaker.state and recoil.breaker.transitions for this
// policy; it records the state as closed, where a new breaker starts. To
// call a hook of your own as well, call both from one function.
func (o *Observer) BreakerHook() func(from, to breaker.State, at time.Time) {
	m := o.m
	m.state.Record(context.Background(), 0, o.record...)
	var entered [len(metricdef.States)][]metric.AddOption
	for _, s := range metricdef.States {
		entered[metricdef.StateValue(s)] = addOpts(o.policy, StateKey.String(s.String()))
	}
	return func(_, to breaker.State, _ time.Time) {
		v := metricdef.StateValue(to)
		m.state.Record(context.Background(), int64(v), o.record...)
		m.transitions.Add(context.Background(), 1, entered[v]...)
	}
}

// Limiter returns l (not nil) wrapped so that the time each attempt waits
// in its queue is recorded in recoil.limiter.queue_wait. Use it as the
// policy's Limiter; Instrument does that for a policy that has one.
func (o *Observer) Limiter(l recoil.Limiter) *Limiter {
	wait, record := o.m.queueWait, o.record
	return &Limiter{metricdef.Limiter{L: l, Record: func(ctx context.Context, s float64) { wait.Record(ctx, s, record...) }}}
}

// Breaker returns b (not nil) wrapped so that the calls reported slow to
// it apart from their outcome — the HTTP Transport's slow streams — are
// counted in recoil.breaker.slow_reports, and reports its rate window as
// the reader collects: recoil.breaker.window.calls,
// recoil.breaker.window.slow_calls and recoil.breaker.slow_call_rate (the
// rate its SlowCallRate trips on). Use it as the policy's Breaker;
// Instrument does that for a policy whose Breaker is a *breaker.Breaker.
// The wrapper is still a recoil.LatencyBreaker, as b is, and allocates
// nothing per call.
func (o *Observer) Breaker(b *breaker.Breaker) *Breaker {
	o.m.breakers.Add(o.policy.Value.AsString(), b)
	slow, add := o.m.slowReports, o.add
	return &Breaker{metricdef.Breaker{B: b, Slow: func() { slow.Add(context.Background(), 1, add...) }}}
}

// Instrument makes p report to o: it sets p.Observe and p.OnAttempt to o's
// (after the hooks p already has, which still run first), wraps
// p.Limiter, if set, with Limiter, and p.Breaker, if it is a
// *breaker.Breaker, with Breaker. If p has a Fallback, its named targets'
// attribute sets are made now rather than at the first call. A breaker's
// state hook is set where the breaker is made (BreakerHook). Call it
// before p is used.
func (o *Observer) Instrument(p *recoil.Policy) {
	metricdef.Register(o.targets, p)
	metricdef.Instrument(p, o.Observe, o.OnAttempt, func(l recoil.Limiter) recoil.Limiter { return o.Limiter(l) })
	metricdef.InstrumentBreaker(p, func(b *breaker.Breaker) recoil.Breaker { return o.Breaker(b) })
}

// Breaker is a circuit breaker that counts the slow reports it is given.
// Get one from Observer.Breaker; the zero Breaker is not usable. It is
// safe for concurrent use.
type Breaker struct {
	t metricdef.Breaker
}

// AllowAt reports whether an attempt may go, as the wrapped breaker does.
func (b *Breaker) AllowAt(now time.Time) bool { return b.t.AllowAt(now) }

// RecordAt records an attempt's outcome in the wrapped breaker.
func (b *Breaker) RecordAt(now time.Time, o breaker.Outcome) { b.t.RecordAt(now, o) }

// RecordLatencyAt records an attempt's outcome and latency in the wrapped
// breaker, which counts it slow above its SlowCallThreshold.
func (b *Breaker) RecordLatencyAt(now time.Time, o breaker.Outcome, latency time.Duration) {
	b.t.RecordLatencyAt(now, o, latency)
}

// WantsLatency reports whether the wrapped breaker judges latencies.
func (b *Breaker) WantsLatency() bool { return b.t.WantsLatency() }

// RecordSlowAt counts a slow report in recoil.breaker.slow_reports and
// gives it to the wrapped breaker.
func (b *Breaker) RecordSlowAt(now time.Time) { b.t.RecordSlowAt(now) }

// Limiter is a recoil.Limiter that records how long each attempt waited
// for a slot. The loop asks TryAcquire first and waits in Acquire only when
// every slot is held, so only waits are recorded, and the healthy path
// costs nothing more. Get one from Observer.Limiter; the zero Limiter is
// not usable. It is safe for concurrent use if the limiter it wraps is.
type Limiter struct {
	t metricdef.Limiter
}

// TryAcquire takes a free slot without waiting, as the wrapped limiter does.
func (l *Limiter) TryAcquire() bool { return l.t.TryAcquire() }

// Acquire waits for a slot in the wrapped limiter and records how long it
// waited, whether or not it got one.
func (l *Limiter) Acquire(ctx context.Context) error { return l.t.Acquire(ctx) }

// Release returns a slot to the wrapped limiter.
func (l *Limiter) Release() { l.t.Release() }
