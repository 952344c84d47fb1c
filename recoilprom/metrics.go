package recoilprom

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/internal/metricdef"
)

// Metrics is the set of recoil's Prometheus metrics, labelled by policy. It
// is a prometheus.Collector: register it once, then take an Observer per
// policy with Policy, and export each fleet client with Fleet. Create it
// with NewMetrics; the zero Metrics is not usable. It is safe for
// concurrent use.
type Metrics struct {
	attempts    *prometheus.CounterVec
	retries     *prometheus.HistogramVec
	delay       *prometheus.HistogramVec
	waits       *prometheus.HistogramVec
	stops       *prometheus.CounterVec
	refusals    *prometheus.CounterVec
	state       *prometheus.GaugeVec
	transitions *prometheus.CounterVec
	queueWait   *prometheus.HistogramVec
	hedges      *prometheus.CounterVec
	hedgeRefuse *prometheus.CounterVec
	wasted      *prometheus.CounterVec
	tgtAttempts *prometheus.CounterVec
	fallbacks   *prometheus.CounterVec
	slowReports *prometheus.CounterVec
	fleetDesc   *prometheus.Desc
	windowDesc  [3]*prometheus.Desc // calls, slow calls, slow-call rate
	fleets      metricdef.Fleets
	breakers    metricdef.Breakers
	targets     metricdef.PolicyTargets[targetSeries]
}

// NewMetrics returns recoil's metrics, unregistered; see
// docs/observability.md for the list.
func NewMetrics() *Metrics {
	return &Metrics{
		attempts: counter("recoil_attempts_total",
			"Attempts made, by policy and outcome: success, or the failure's class (transient, throttled, overloaded, permanent, canceled).",
			"outcome"),
		retries: histogram("recoil_call_retries",
			"Retries per call, the first attempt not counted (gRFC A96 grpc.client.call.retries); its count is the number of calls.",
			metricdef.RetryBuckets),
		delay: histogram("recoil_call_retry_delay_seconds",
			"Total time per call spent waiting between attempts (gRFC A96 grpc.client.call.retry_delay).",
			metricdef.DelayBuckets),
		waits: histogram("recoil_retry_wait_seconds",
			"Each wait before a retry: the backoff's, or the one the server directed.",
			metricdef.DelayBuckets),
		stops: counter("recoil_stops_total",
			"Calls ended, by policy and stop reason (none for a success).",
			"reason"),
		refusals: counter("recoil_budget_refusals_total",
			"Calls stopped because a retry budget refused a retry (or the call)."),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "recoil_breaker_state",
			Help: "Circuit breaker state: 0 closed, 1 half-open, 2 open.",
		}, []string{"policy"}),
		transitions: counter("recoil_breaker_transitions_total",
			"Circuit breaker state changes, by the state entered.",
			"state"),
		queueWait: histogram("recoil_limiter_queue_wait_seconds",
			"Time attempts waited in the concurrency limiter's queue (attempts that found a free slot do not wait and are not observed).",
			metricdef.QueueWaitBuckets),
		hedges:      counter(metricdef.Hedges.Prom, metricdef.Hedges.Help),
		hedgeRefuse: counter(metricdef.HedgeRefusals.Prom, metricdef.HedgeRefusals.Help),
		wasted:      counter(metricdef.WastedAttempts.Prom, metricdef.WastedAttempts.Help),
		tgtAttempts: counter(metricdef.TargetAttempts.Prom, metricdef.TargetAttempts.Help, "target"),
		fallbacks:   counter(metricdef.Fallbacks.Prom, metricdef.Fallbacks.Help, "target", "why"),
		slowReports: counter(metricdef.SlowReports.Prom, metricdef.SlowReports.Help),
		fleetDesc: prometheus.NewDesc(metricdef.FleetFallbacksProm, metricdef.FleetFallbacksHelp,
			[]string{"fleet", "cause"}, nil),
		windowDesc: [3]*prometheus.Desc{gauge(metricdef.WindowCalls), gauge(metricdef.WindowSlowCalls), gauge(metricdef.SlowCallRate)},
	}
}

// gauge declares a gauge labelled by policy, read when Metrics is collected.
func gauge(g metricdef.Gauge) *prometheus.Desc {
	return prometheus.NewDesc(g.Prom, g.Help, []string{"policy"}, nil)
}

// counter declares a counter labelled by policy and then by labels.
func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"policy"}, labels...))
}

// histogram declares a histogram labelled by policy.
func histogram(name, help string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{"policy"})
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.attempts, m.retries, m.delay, m.waits, m.stops, m.refusals, m.state, m.transitions, m.queueWait,
		m.hedges, m.hedgeRefuse, m.wasted, m.tgtAttempts, m.fallbacks, m.slowReports}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
	ch <- m.fleetDesc
	for _, d := range m.windowDesc {
		ch <- d
	}
}

// Collect implements prometheus.Collector. It reads each fleet client's
// counts (Fleet) and each breaker's window (Observer.Breaker) as it
// collects.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
	m.fleets.Each(func(name string, unreachable, refused uint64) {
		ch <- prometheus.MustNewConstMetric(m.fleetDesc, prometheus.CounterValue, float64(unreachable), name, metricdef.CauseUnreachable)
		ch <- prometheus.MustNewConstMetric(m.fleetDesc, prometheus.CounterValue, float64(refused), name, metricdef.CauseRefused)
	})
	m.breakers.Each(func(policy string, w metricdef.Window) {
		ch <- prometheus.MustNewConstMetric(m.windowDesc[0], prometheus.GaugeValue, float64(w.Calls), policy)
		ch <- prometheus.MustNewConstMetric(m.windowDesc[1], prometheus.GaugeValue, float64(w.SlowCalls), policy)
		ch <- prometheus.MustNewConstMetric(m.windowDesc[2], prometheus.GaugeValue, w.Rate, policy)
	})
}

// FleetCounter is what Fleet reads: the calls a fleet client made to Redis
// that ended in a decision from the process's local share, by cause.
// *fleet.Client (package github.com/recoil-go/recoil/fleet) has the method;
// taking it through this interface keeps that module, and its Redis
// client, out of the builds of recoilprom's users who do not use it.
type FleetCounter interface {
	// Fallbacks returns the calls that got no answer in time and the calls
	// Redis answered with an error reply. Both only grow.
	Fallbacks() (unreachable, refused uint64)
}

// Fleet exports c's fallbacks as recoil_fleet_fallbacks_total, a counter
// labelled fleet="name" and cause="unreachable" or cause="refused". The
// counts are read from c each time Metrics is collected, so a scrape sees
// them as they are then; both series are exported from the first scrape,
// at zero. A refused count above zero means decisions fall back while
// Redis answers: a healthy Redis is being bypassed.
//
// name must be 1 to 64 letters, digits, '_', '-' or '.', as a policy's
// name must be, and not already given to Fleet; c must not be nil. There
// is no way to remove a fleet client: export one per Client, for the
// life of the process.
func (m *Metrics) Fleet(name string, c FleetCounter) error {
	if err := m.fleets.Add(name, c); err != nil {
		return fmt.Errorf("recoilprom: fleet %q: %w", name, err)
	}
	return nil
}

// Policy returns the Observer that records the calls of one policy under
// the label policy="name". name must be 1 to 64 letters, digits, '_', '-'
// or '.': a dependency's name, never a URL or a key, so the label's values
// stay few. Its series are created at zero (a Fallback's targets' when
// Instrument is given the policy, or when a call first reports them).
// Asking twice for one name returns Observers that share the series.
func (m *Metrics) Policy(name string) (*Observer, error) {
	if err := metricdef.CheckPolicy(name); err != nil {
		return nil, fmt.Errorf("recoilprom: %q: %w", name, err)
	}
	o := &Observer{m: m, policy: name}
	for i, outcome := range metricdef.Outcomes() {
		o.attempts[i] = m.attempts.WithLabelValues(name, outcome)
	}
	for r, reason := range metricdef.Reasons() {
		o.stops[r] = m.stops.WithLabelValues(name, reason)
	}
	o.retries = m.retries.WithLabelValues(name)
	o.delay = m.delay.WithLabelValues(name)
	o.waits = m.waits.WithLabelValues(name)
	o.refusals = m.refusals.WithLabelValues(name)
	o.hedges = m.hedges.WithLabelValues(name)
	o.hedgeRefuse = m.hedgeRefuse.WithLabelValues(name)
	o.wasted = m.wasted.WithLabelValues(name)
	o.slowReports = m.slowReports.WithLabelValues(name)
	o.targets = m.targets.For(name, func(target string) *targetSeries {
		ts := &targetSeries{attempts: m.tgtAttempts.WithLabelValues(name, target)}
		for i, why := range metricdef.Whys() {
			ts.left[i] = m.fallbacks.WithLabelValues(name, target, why)
		}
		return ts
	})
	return o, nil
}

// targetSeries is one target's series of one policy.
type targetSeries struct {
	attempts prometheus.Counter
	left     [metricdef.NumWhys]prometheus.Counter
}

// Observer records one policy's calls into Metrics. Its methods are the
// policy's hooks; Instrument installs them. Get one from Metrics.Policy;
// the zero Observer is not usable. It is safe for concurrent use.
type Observer struct {
	m        *Metrics
	policy   string
	attempts [metricdef.NumOutcomes]prometheus.Counter
	stops    [metricdef.NumReasons]prometheus.Counter
	retries  prometheus.Observer
	delay    prometheus.Observer
	waits    prometheus.Observer
	refusals prometheus.Counter

	hedges      prometheus.Counter
	hedgeRefuse prometheus.Counter
	wasted      prometheus.Counter
	slowReports prometheus.Counter
	targets     *metricdef.TargetSeries[targetSeries]
}

// Observe records a call's Summary: its retries, its total wait, why it
// stopped, and a budget refusal if that was why; under a Hedge, its
// hedges, refused hedges and wasted attempts; and under a Fallback, its
// attempts on each target and each target it left or passed over, and
// why. It is a Policy.Observe hook.
func (o *Observer) Observe(_ context.Context, s recoil.Summary) {
	o.retries.Observe(float64(max(s.Attempts-1, 0)))
	o.delay.Observe(s.Waited.Seconds())
	if int(s.Reason) < len(o.stops) {
		o.stops[s.Reason].Inc()
	} else {
		o.m.stops.WithLabelValues(o.policy, s.Reason.String()).Inc()
	}
	if s.Reason == recoil.ReasonBudget {
		o.refusals.Inc()
	}
	if len(s.Targets) > 0 {
		o.observeTargets(s.Targets)
	}
	if metricdef.Hedged(&s) {
		o.observeHedges(&s)
	}
}

// observeTargets records a call's attempts on each target and the targets
// it left.
func (o *Observer) observeTargets(ts []recoil.TargetReport) {
	metricdef.Targets(ts, func(name string, attempts, why int) {
		series := o.targets.Get(name)
		if attempts > 0 {
			series.attempts.Add(float64(attempts))
		}
		if why >= 0 {
			series.left[why].Inc()
		}
	})
}

// observeHedges records a call's hedges, refused hedges and wasted
// attempts.
func (o *Observer) observeHedges(s *recoil.Summary) {
	if s.Hedges > 0 {
		o.hedges.Add(float64(s.Hedges))
	}
	if s.RefusedHedges > 0 {
		o.hedgeRefuse.Add(float64(s.RefusedHedges))
	}
	if s.Wasted > 0 {
		o.wasted.Add(float64(s.Wasted))
	}
}

// OnAttempt records an attempt by its outcome, and the wait before the next
// one when it is retried. It is a Policy.OnAttempt hook.
func (o *Observer) OnAttempt(_ context.Context, e recoil.AttemptEvent) {
	if i := metricdef.OutcomeIndex(e); i >= 0 {
		o.attempts[i].Inc()
	} else {
		o.m.attempts.WithLabelValues(o.policy, metricdef.Outcome(e)).Inc()
	}
	if e.Retry {
		o.waits.Observe(e.Wait.Seconds())
	}
}

// BreakerHook returns a function for breaker.Settings.OnStateChange that
// keeps recoil_breaker_state and recoil_breaker_transitions_total for this
// policy; it sets the state to closed, where a new breaker starts. To call
// a hook of your own as well, call both from one function.
func (o *Observer) BreakerHook() func(from, to breaker.State, at time.Time) {
	gauge := o.m.state.WithLabelValues(o.policy)
	gauge.Set(0)
	var entered [len(metricdef.States)]prometheus.Counter
	for _, s := range metricdef.States {
		entered[metricdef.StateValue(s)] = o.m.transitions.WithLabelValues(o.policy, s.String())
	}
	return func(_, to breaker.State, _ time.Time) {
		v := metricdef.StateValue(to)
		gauge.Set(float64(v))
		entered[v].Inc()
	}
}

// Limiter returns l (not nil) wrapped so that the time each attempt waits
// in its queue is recorded in recoil_limiter_queue_wait_seconds. Use it as
// the policy's Limiter; Instrument does that for a policy that has one.
func (o *Observer) Limiter(l recoil.Limiter) *Limiter {
	wait := o.m.queueWait.WithLabelValues(o.policy)
	return &Limiter{metricdef.Limiter{L: l, Record: func(_ context.Context, s float64) { wait.Observe(s) }}}
}

// Breaker returns b (not nil) wrapped so that the calls reported slow to
// it apart from their outcome — the HTTP Transport's slow streams — are
// counted in recoil_breaker_slow_reports_total, and exports its rate
// window, read at each collection: recoil_breaker_window_calls,
// recoil_breaker_window_slow_calls and recoil_breaker_slow_call_rate (the
// rate its SlowCallRate trips on). Use it as the policy's Breaker;
// Instrument does that for a policy whose Breaker is a *breaker.Breaker.
// The wrapper is still a recoil.LatencyBreaker, as b is, and allocates
// nothing per call.
func (o *Observer) Breaker(b *breaker.Breaker) *Breaker {
	o.m.breakers.Add(o.policy, b)
	return &Breaker{metricdef.Breaker{B: b, Slow: o.slowReports.Inc}}
}

// Instrument makes p report to o: it sets p.Observe and p.OnAttempt to o's
// (after the hooks p already has, which still run first), wraps
// p.Limiter, if set, with Limiter, and p.Breaker, if it is a
// *breaker.Breaker, with Breaker. If p has a Fallback, its named targets'
// series are created, at zero. A breaker's state hook is set where the
// breaker is made (BreakerHook). Call it before p is used.
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

// RecordSlowAt counts a slow report in recoil_breaker_slow_reports_total
// and gives it to the wrapped breaker.
func (b *Breaker) RecordSlowAt(now time.Time) { b.t.RecordSlowAt(now) }

// Limiter is a recoil.Limiter that records how long each attempt waited
// for a slot. The loop asks TryAcquire first and waits in Acquire only when
// every slot is held, so only waits are observed, and the healthy path
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
