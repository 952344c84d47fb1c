package sim

import (
	"math"
	"time"
)

// Service kinds for ServiceSpec.Kind.
const (
	KindService = "service" // workers, a queue, service times, failures
	KindRecord  = "record"  // a contended record under optimistic concurrency
)

// ServiceSpec is a dependency, or a layer that calls one. An attempt that
// reaches it is counted, metered against the allowance, failed if an outage
// is on, queued for a worker (or refused, overloaded, if the queue is full),
// and served: the worker spends a service time, the attempt fails with
// probability Failure (or permanently, for a rejected endpoint), and a layer
// then calls the next service with its own policy, holding the worker until
// that call and all its retries are over (the pool drain of docs/why.md,
// section 1).
//
// A record (Kind "record") is different: an attempt reads the record's
// version and writes it back if unchanged, each message taking a Latency
// (the setup of Brooker's "Exponential Backoff And Jitter" study); a failed
// write is a transient failure.
type ServiceSpec struct {
	Name string `yaml:"name" json:"name"`
	// Kind is KindService (the default) or KindRecord.
	Kind string `yaml:"kind" json:"kind,omitempty"`
	// Workers is the number of workers; zero means unlimited.
	Workers int `yaml:"workers" json:"workers,omitempty"`
	// Queue bounds the requests waiting for a worker; zero means unbounded,
	// a negative value means none wait (a request finding every worker busy
	// is refused as overloaded).
	Queue int `yaml:"queue" json:"queue,omitempty"`
	// Service is the time a worker spends on a request (before calling the
	// next service, for a layer).
	Service Dist `yaml:"service" json:"service"`
	// Latency is the one-way network delay to and from the service.
	Latency Dist `yaml:"latency" json:"latency"`
	// FailTime is how long a refusal takes to come back (an outage, a 429, a
	// full queue); zero means at once.
	FailTime Dist `yaml:"fail_time" json:"fail_time"`
	// Failure is the probability that a served request fails (a 500).
	Failure float64 `yaml:"failure" json:"failure,omitempty"`
	// Reject lists endpoints whose requests always fail permanently after
	// being served: a validator's 400 (docs/why.md, section 1).
	Reject []string `yaml:"reject" json:"reject,omitempty"`
	// RejectTime is how long serving a rejected request takes (a validator
	// answers before any model is loaded); zero means Service.
	RejectTime Dist `yaml:"reject_time" json:"reject_time"`
	// Allowance is the organisation's request allowance, metered per
	// calendar minute at admission: an attempt over it is refused with a
	// 429 whose Retry-After is the time to the next minute, and counts for
	// nothing; an admitted one counts whatever its outcome (docs/why.md,
	// section 1).
	Allowance Rate `yaml:"allowance" json:"allowance,omitempty"`
	// Outages are windows in which requests fail, or are slowed.
	Outages []Outage `yaml:"outages" json:"outages,omitempty"`
	// Tail, if set, is the service's slow tail: a share of the requests it
	// serves, all through the run, take a service time of their own (a
	// garbage-collection pause, a cold cache, a long generation). The
	// tail is the service's own variance, not its load: it is what a
	// hedge races.
	Tail *Tail `yaml:"tail" json:"tail,omitempty"`
	// CancelOnAbandon makes a worker notice when the caller of the request
	// it holds has stopped waiting (the caller's cancellation reaching it,
	// as a Go server's request context is cancelled when the client hangs
	// up): a queued request whose caller has left is dropped when it comes
	// to a worker, and one being served stops at the caller's attempt
	// timeout. Either is counted as "cancelled", not as abandoned work. By
	// default a worker finishes whatever it started. A layer (a service that
	// calls another) cannot take it: it would have to cancel its call below.
	CancelOnAbandon bool `yaml:"cancel_on_abandon" json:"cancel_on_abandon,omitempty"`
	// Calls names the service this one calls for each request, with Policy.
	Calls string `yaml:"calls" json:"calls,omitempty"`
	// Policy is the policy of the calls to Calls.
	Policy PolicyRef `yaml:"policy" json:"policy"`
	// AttemptTimeout, if set, overrides the policy's: how long this layer
	// waits for one attempt of its call below. A timeout belongs to the
	// layer more than to the policy, so compared policies can share one.
	AttemptTimeout time.Duration `yaml:"attempt_timeout" json:"attempt_timeout,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Tail is a service's slow tail (ServiceSpec.Tail). In a file:
//
//	tail: {share: 3%, service: {dist: uniform, min: 1s, max: 3s}}
type Tail struct {
	// Share is the share of the requests served that fall in the tail, in
	// (0, 1].
	Share float64 `yaml:"share" json:"share"`
	// Service is the service time of a request in the tail, replacing
	// ServiceSpec.Service.
	Service Dist `yaml:"service" json:"service"`

	Pos Pos `yaml:"-" json:"-"`
}

// validate checks the tail of service ss.
func (t *Tail) validate(v *validator, ss *ServiceSpec) {
	if ss.Kind == KindRecord {
		v.errf(ss.Pos, "tail", "a record has no service time to slow")
		return
	}
	if t.Share <= 0 || t.Share > 1 || math.IsNaN(t.Share) {
		v.errf(t.Pos, "share", "must be a share in (0, 1], such as 3%%")
	}
	if t.Service.Kind == "" && t.Service.IsZero() {
		v.errf(t.Pos, "service", "missing: the tail's service time, such as {dist: uniform, min: 1s, max: 3s}")
		return
	}
	t.Service.validate(v)
	if t.Service.IsZero() {
		v.errf(t.Pos, "service", "must be more than zero")
	}
}

// state is the tail as a run tracks it: a slow outage that lasts the
// whole run and is not reported as one.
func (t *Tail) state() outageState {
	return outageState{end: math.MaxInt64, failure: t.Share, slow: true, service: t.Service.sampler(), tail: true, class: "slow"}
}

// Outage is a window in which a service fails requests at admission.
type Outage struct {
	// Start is when it begins, from the start of the run.
	Start time.Duration `yaml:"start" json:"start"`
	// Duration is how long it lasts at least.
	Duration time.Duration `yaml:"duration" json:"duration"`
	// Failure is the share of requests failed while it lasts (for a slow
	// outage, the share slowed); zero means 1.
	Failure float64 `yaml:"failure" json:"failure,omitempty"`
	// Class is how the failure reads to a caller: "transient" (the default:
	// a 502, a refused connection), "overloaded" (a 503), "drop": no
	// answer at all, so the caller waits for its attempt timeout (a
	// database failover "dropping about one request in twenty"), or
	// "slow": nothing fails, but a request that gets a worker while the
	// outage lasts takes Service instead of the service's own time (a
	// provider whose answers take 20 s instead of 2 s). Three more say
	// why a provider refuses, each an answer that comes at once (after
	// FailTime) and that a retry of the same request does not change:
	// "not-found", a 404 model_not_found (a retired model);
	// "unauthorized", a 401 invalid_api_key (a revoked key); "quota", a
	// 429 insufficient_quota (a spent quota). A fallback chain moves on
	// from each (recoil.DefaultFallbackRule).
	Class string `yaml:"class" json:"class,omitempty"`
	// Service is the service time of a request slowed by a slow outage,
	// replacing ServiceSpec.Service; it is required with class slow and
	// applies to nothing else.
	Service Dist `yaml:"service" json:"service"`
	// RecoverBelow delays recovery: after Duration the service stays down
	// until the attempts arriving in the last full window come to no more
	// than this rate ("in reality the harder you hammer the later it
	// recovers"). Zero means it recovers on time.
	RecoverBelow Rate `yaml:"recover_below" json:"recover_below,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

func (ss *ServiceSpec) validate(v *validator, svc map[string]int, endpoints map[string]bool) {
	p := ss.Pos
	switch ss.Kind {
	case "", KindService:
	case KindRecord:
		if ss.Calls != "" || ss.Workers != 0 || ss.Queue != 0 || !ss.Service.IsZero() || ss.Allowance != 0 || len(ss.Reject) > 0 || ss.Failure != 0 {
			v.errf(p, "kind", "a record takes only a latency (and outages)")
		}
	default:
		v.errf(p, "kind", "unknown kind %q (want service or record)", ss.Kind)
	}
	if ss.Workers < 0 {
		v.errf(p, "workers", "must not be negative (0 means unlimited)")
	}
	if ss.Failure < 0 || ss.Failure > 1 || math.IsNaN(ss.Failure) {
		v.errf(p, "failure", "must be a probability in [0, 1]")
	}
	if ss.Allowance < 0 || math.IsNaN(float64(ss.Allowance)) || math.IsInf(float64(ss.Allowance), 0) {
		v.errf(p, "allowance", "must be a positive rate")
	}
	for _, e := range ss.Reject {
		if !endpoints[e] {
			v.errf(p, "reject", "no client has endpoint %q", e)
		}
	}
	ss.Service.validate(v)
	ss.RejectTime.validate(v)
	if !ss.RejectTime.IsZero() && len(ss.Reject) == 0 {
		v.errf(p, "reject_time", "applies only with a reject list")
	}
	ss.Latency.validate(v)
	ss.FailTime.validate(v)
	for i := range ss.Outages {
		ss.Outages[i].validate(v, ss.Kind)
	}
	if ss.Tail != nil {
		ss.Tail.validate(v, ss)
	}
	if ss.CancelOnAbandon && (ss.Calls != "" || ss.Kind == KindRecord) {
		v.errf(p, "cancel_on_abandon", "applies only to a service that calls no other and is not a record")
	}
	if ss.AttemptTimeout < 0 {
		v.errf(p, "attempt_timeout", "must not be negative")
	}
	if ss.AttemptTimeout != 0 && ss.Calls == "" {
		v.errf(p, "attempt_timeout", "applies only to a service that calls another (calls)")
	}
	if ss.Calls != "" {
		if _, ok := svc[ss.Calls]; !ok {
			v.errf(p, "calls", "no service named %q", ss.Calls)
		}
		if ss.Policy.Spec != nil {
			validatePolicy(v, ss.Policy.Spec, svc)
		}
	} else if ss.Policy.Spec != nil {
		v.errf(p, "policy", "a policy applies only to a service that calls another (calls)")
	}
}

// serviceIndex checks the services' names and the target, and returns
// each service's index by name.
func (s *Scenario) serviceIndex(v *validator) map[string]int {
	svc := map[string]int{}
	for i := range s.Services {
		ss := &s.Services[i]
		if ss.Name == "" {
			v.errf(ss.Pos, "name", "each service needs a name")
		}
		if _, dup := svc[ss.Name]; dup {
			v.errf(ss.Pos, "name", "service %q is listed twice", ss.Name)
		}
		svc[ss.Name] = i
	}
	if s.Target != "" {
		if _, ok := svc[s.Target]; !ok {
			v.errf(s.Pos, "target", "no service named %q", s.Target)
		}
	}
	return svc
}

// validateServices checks every service, and that no services call each
// other in a cycle, which would never end. It reports whether a service
// calls another with the compared policy.
func (s *Scenario) validateServices(v *validator, svc map[string]int, endpoints map[string]bool) (compared bool) {
	for i := range s.Services {
		ss := &s.Services[i]
		ss.validate(v, svc, endpoints)
		if ss.Calls != "" && ss.Policy.Spec == nil {
			compared = true
		}
	}
	for i := range s.Services {
		seen := map[int]bool{}
		for j := i; j >= 0; {
			if seen[j] {
				v.errf(s.Services[i].Pos, "calls", "services call each other in a cycle")
				break
			}
			seen[j] = true
			next, ok := svc[s.Services[j].Calls]
			if !ok {
				break
			}
			j = next
		}
	}
	return compared
}

// validate checks an outage of a service of kind.
func (o *Outage) validate(v *validator, kind string) {
	if o.Start < 0 {
		v.errf(o.Pos, "start", "must not be negative")
	}
	if o.Duration <= 0 {
		v.errf(o.Pos, "duration", "must be positive")
	}
	if o.Failure < 0 || o.Failure > 1 || math.IsNaN(o.Failure) {
		v.errf(o.Pos, "failure", "must be a probability in [0, 1]")
	}
	switch o.Class {
	case "", "transient", "overloaded", "drop", "not-found", "unauthorized", "quota":
		if !o.Service.IsZero() {
			v.errf(o.Pos, "service", "applies only to an outage of class slow")
		}
	case "slow":
		switch {
		case kind == KindRecord:
			v.errf(o.Pos, "class", "a record has no service time to slow (want transient, overloaded or drop)")
		case o.Service.Kind == "" && o.Service.IsZero():
			v.errf(o.Pos, "service", "missing: a slow outage needs the service time it slows requests to, such as 20s")
		default:
			o.Service.validate(v)
			if o.Service.IsZero() {
				v.errf(o.Pos, "service", "must be more than zero")
			}
		}
	default:
		v.errf(o.Pos, "class", "unknown class %q (want transient, overloaded, drop, slow, not-found, unauthorized or quota)", o.Class)
	}
	if o.RecoverBelow < 0 {
		v.errf(o.Pos, "recover_below", "must not be negative")
	}
}

// buildNode sets n up to run service ss.
func (w *world) buildNode(b *builder, n *node, ss *ServiceSpec) {
	n.spec = ss
	n.record = ss.Kind == KindRecord
	n.workers = ss.Workers
	switch {
	case ss.Queue == 0:
		n.qmax = -1
	case ss.Queue < 0:
		n.qmax = 0
	default:
		n.qmax = ss.Queue
	}
	n.service, n.latency, n.failTime = ss.Service.sampler(), ss.Latency.sampler(), ss.FailTime.sampler()
	n.rejectT = ss.RejectTime.sampler()
	n.failure = ss.Failure
	n.cancel = ss.CancelOnAbandon
	if len(ss.Reject) > 0 {
		n.reject = make([]bool, len(b.endpoints))
		for _, e := range ss.Reject {
			n.reject[b.epIndex[e]] = true
		}
	}
	if ss.Allowance > 0 {
		n.allowance = int64(math.Round(ss.Allowance.PerMinute()))
	}
	n.minute = -1
	for _, o := range ss.Outages {
		n.outages = append(n.outages, o.state(b.window))
		n.slowing = n.slowing || o.Class == "slow"
	}
	if ss.Tail != nil {
		n.outages = append(n.outages, ss.Tail.state())
		n.slowing = true
	}
	n.down = -1
	if ss.Calls != "" {
		n.down = b.svc[ss.Calls]
		n.pol = b.pols.pick(ss.Policy, ss.AttemptTimeout)
		n.rp = n.pol.newPolicy(w.prnd)
	}
	n.m.epArr = make([]int64, len(b.endpoints))
	n.m.epThr = make([]int64, len(b.endpoints))
}

// state returns the outage as a run tracks it, its recovery threshold
// counted per window.
func (o Outage) state(window time.Duration) outageState {
	st := outageState{start: int64(o.Start), end: int64(o.Start + o.Duration), failure: o.Failure, res: resDown}
	if st.failure == 0 {
		st.failure = 1
	}
	switch o.Class {
	case "overloaded":
		st.res = resDown503
	case "not-found":
		st.res = resNotFound
	case "unauthorized":
		st.res = resUnauthorized
	case "quota":
		st.res = resQuota
	case "drop":
		st.drop = true
	case "slow":
		st.slow, st.service = true, o.Service.sampler()
	}
	st.recoverBelow = float64(o.RecoverBelow) * window.Seconds()
	st.class = o.Class
	return st
}

// serviceResult collects what the run counted at n, which ended at end.
func (w *world) serviceResult(n *node, end int64) ServiceResult {
	m := &n.m
	m.busy.update(end, w.warm, n.busy)
	m.queue.update(end, w.warm, n.q.size)
	sr := ServiceResult{
		Name: n.spec.Name, Workers: n.workers,
		Arrivals: m.arrivals, Served: m.served, Writes: m.writes, Succeeded: m.res[resOK],
		Throttled: m.res[resThrottled] + m.res[resQuota], Abandoned: m.abandoned, Peak: n.peak, PeakAt: time.Duration(n.peakAt),
		MaxQueue: m.maxQueue, Wait: percentiles(&m.wait), Series: m.series,
	}
	if end > w.warm {
		sr.MeanBusy = m.busy.area / float64(end-w.warm)
		sr.MeanQueue = m.queue.area / float64(end-w.warm)
	}
	for res, k := range m.res {
		if k > 0 && res != int(resOK) {
			if sr.Failures == nil {
				sr.Failures = map[string]int64{}
			}
			sr.Failures[resNames[res]] += k
		}
	}
	sr.ArrivalsBy, sr.ThrottledBy = w.byEndpoint(m.epArr), w.byEndpoint(m.epThr)
	for _, o := range n.outages {
		if o.tail {
			continue // a slow tail is the service's own, not an outage
		}
		or := OutageResult{Start: time.Duration(o.start), End: time.Duration(o.end), Recovered: o.recovered, RecoveredAt: time.Duration(o.recoveredAt), Class: o.class}
		if !o.recovered && end >= o.end && o.recoverBelow == 0 {
			or.Recovered, or.RecoveredAt = true, time.Duration(o.end)
		}
		sr.Outages = append(sr.Outages, or)
	}
	return sr
}

// byEndpoint returns counts per endpoint index by endpoint name, those
// that are not zero; nil if all are.
func (w *world) byEndpoint(counts []int64) map[string]int64 {
	var out map[string]int64
	for ep, k := range counts {
		if k > 0 {
			if out == nil {
				out = map[string]int64{}
			}
			out[w.endpoints[ep]] = k
		}
	}
	return out
}
