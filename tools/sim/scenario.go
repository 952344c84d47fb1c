package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/internal/strictyaml"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// Scenario is one simulation: services, the clients that call them, and the
// retry policies to compare. Every run of a scenario is the same world under
// one of Policies (and, with a Sweep, at one of the sweep's values). Load and
// Parse read a scenario from YAML, the format of the files in the
// repository's scenarios directory; a Scenario built in Go works the same.
//
// The zero value of every field means its documented default. A Scenario is
// not modified by Run and may be run concurrently from several goroutines.
type Scenario struct {
	// Name names the scenario in reports.
	Name string `yaml:"name" json:"name"`
	// Description says what the scenario shows, in a sentence or two.
	Description string `yaml:"description" json:"description,omitempty"`
	// Seed seeds the run's random source when Options.Seed is zero; zero
	// means 1.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// Duration is how long open-loop clients send and the longest a run
	// lasts in virtual time. Zero means one hour: enough for closed-loop
	// clients with a fixed number of calls, which end the run when they are
	// done. Calls unfinished at the end are counted as such.
	Duration time.Duration `yaml:"duration" json:"duration,omitempty"`
	// Warmup is left out of the statistics: calls begun and samples taken
	// before it do not count.
	Warmup time.Duration `yaml:"warmup" json:"warmup,omitempty"`
	// Window is the width of the windows in which peak arrivals are counted;
	// zero means 200ms, the window of docs/why.md, section 6.
	Window time.Duration `yaml:"window" json:"window,omitempty"`
	// Sample is the interval of the time series (queue depth, workers busy,
	// arrivals); zero means Window, or Duration/2000 if that is longer.
	Sample time.Duration `yaml:"sample" json:"sample,omitempty"`
	// Target names the service whose attempts and peak the summary reports;
	// empty means the last service listed (the dependency at the bottom).
	Target string `yaml:"target" json:"target,omitempty"`
	// Policies are compared side by side: each run uses one of them wherever
	// a client or service has no policy of its own.
	Policies []PolicySpec `yaml:"policies" json:"policies,omitempty"`
	// Services are the dependencies and the layers that call them.
	Services []ServiceSpec `yaml:"services" json:"services"`
	// Clients are the sources of traffic.
	Clients []ClientSpec `yaml:"clients" json:"clients"`
	// Sweep, if set, runs the scenario once per value of one field.
	Sweep *Sweep `yaml:"sweep" json:"sweep,omitempty"`
	// JitterSource, if set, is the random source the policies draw their
	// jitter from in a run of the given seed, in place of the simulator's
	// own streams: caller k (from 0) of each closed-loop client draws from
	// JitterSource(seed, k), and everything else from JitterSource(seed, -1).
	// A program that compares a real run with its simulation gives the
	// sources its real callers drew from (load.JitterSource), so that each
	// simulated caller draws the same waits as its real counterpart: common
	// random numbers, which leave the model as the only difference between
	// the two. It has no form in a file.
	JitterSource func(seed uint64, caller int) rand.Source `yaml:"-" json:"-"`
	// Schedules is how every policy of the run draws its backoff waits:
	// SchedulesRecoil (or empty) as recoil does, or SchedulesBrooker2015
	// as the simulator of Brooker's study did (see SchedulesBrooker2015).
	Schedules string `yaml:"schedules" json:"schedules,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Values of Scenario.Schedules.
const (
	// SchedulesRecoil draws every wait as recoil.Do does: the default.
	SchedulesRecoil = "recoil"
	// SchedulesBrooker2015 draws waits as the simulator of Marc Brooker's
	// "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015) did,
	// so that a scenario can repeat the study with its base and cap. Two
	// things differ from recoil. The study numbers retries from the first
	// retry's exponent 1: its n-th retry's ceiling is
	// min(max, base·multiplier^n), where recoil's is base·multiplier^(n-1)
	// (exponential, full, equal jitter and proportional waits are drawn
	// as recoil draws retry n+1). And the study caps decorrelated jitter
	// after drawing, min(max, uniform[base, 3·previous]), so a wait lands
	// on the cap with some probability, where recoil draws within
	// [base, min(max, 3·previous)]. Constant and no backoff are unchanged.
	SchedulesBrooker2015 = "brooker-2015"
)

// PolicySpec is a retry policy in the policy language every file that
// names a policy shares (package policyspec): a scenario's compared
// policies, and the policy of a client or of a layer that calls another.
// Zero fields mean recoil's defaults, so an empty PolicySpec is recoil's
// default policy: 3 attempts, full jitter from 100 ms, the gRFC A6 token
// bucket, classification honoured.
//
// The simulator honours every field but IdleTimeout (it has no streams).
// Classify's modes read the simulator's own outcomes: ClassifyTimeouts
// retries the caller's attempt timeouts (and a hop deadline that passed)
// and nothing else. Hop turns the hop protocol on with that edge budget: a
// call that begins a request tree gives it Hop retries for the whole tree,
// each layer spends from what its request carried and reports what it
// spent, and the deadline travels down too, so a layer never works for a
// caller who has stopped waiting.
type PolicySpec = policyspec.Spec

// PolicyRef is the policy a client or service retries with. Its zero value
// (and "compared" in a file) means the policy of the run — one of the
// scenario's Policies; "none" in a file means a single attempt; a mapping is
// a policy of its own, the same in every run.
type PolicyRef struct {
	Spec *PolicySpec
}

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
	// provider whose answers take 20 s instead of 2 s).
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

// ClientSpec is a source of logical calls: open-loop (Poisson arrivals at
// Rate, whatever happens to earlier calls) or closed-loop (Callers callers,
// each making its next call only after the last one ended).
type ClientSpec struct {
	Name string `yaml:"name" json:"name"`
	// Endpoint tags the client's requests all the way down, for per-endpoint
	// counts and a service's Reject list; empty means Name.
	Endpoint string `yaml:"endpoint" json:"endpoint,omitempty"`
	// Target is the service called.
	Target string `yaml:"target" json:"target"`
	// Rate makes the client open-loop: calls arrive as a Poisson process.
	Rate Rate `yaml:"rate" json:"rate,omitempty"`
	// Callers makes the client closed-loop with this many callers.
	Callers int `yaml:"callers" json:"callers,omitempty"`
	// Calls is how many calls each caller makes; zero means calls until the
	// end of the run.
	Calls int `yaml:"calls" json:"calls,omitempty"`
	// Start delays each caller's first call.
	Start Dist `yaml:"start" json:"start"`
	// Think is the pause between a caller's calls.
	Think Dist `yaml:"think" json:"think"`
	// Resubmit, if set, makes a caller whose call failed begin it again
	// after this pause (an app that keeps trying in the background); the
	// failed call still counts as failed. Zero means a failed call
	// is given up.
	Resubmit Dist `yaml:"resubmit" json:"resubmit"`
	// SharedPolicy gives all of a closed-loop client's callers one policy
	// instance, so one budget and one breaker (callers in one process);
	// by default each caller has its own (callers on their own devices).
	// An open-loop client always has one.
	SharedPolicy bool `yaml:"shared_policy" json:"shared_policy,omitempty"`
	// Replicas runs the client as this many replicas (processes) of one
	// service, its calls dealt to them in turn (the callers, for a
	// closed-loop client with SharedPolicy). Each replica has a policy
	// instance of its own — its own budget, breaker and limiter — except
	// a budget of scope fleet (policyspec.ScopeFleet), which is one for
	// every replica, as a budget kept in a shared store is. Zero means 1.
	// See scenarios/fleet-budget.yaml.
	Replicas int `yaml:"replicas" json:"replicas,omitempty"`
	// Policy is the policy of the client's calls.
	Policy PolicyRef `yaml:"policy" json:"policy"`
	// AttemptTimeout, if set, overrides the policy's (see
	// ServiceSpec.AttemptTimeout).
	AttemptTimeout time.Duration `yaml:"attempt_timeout" json:"attempt_timeout,omitempty"`
	// Serial, if set, sends the client's attempts through one connection
	// that carries one at a time (see Serial); nil means each attempt goes
	// on its own.
	Serial *Serial `yaml:"serial" json:"serial,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// Sweep runs a scenario once per value of one field. Path names the field
// by its YAML keys, with list elements selected by name or index:
// "clients[callers].callers", "services[db].failure",
// "services[app].workers". Values are written as they would be in the
// file; From, To and Step generate numeric values instead.
type Sweep struct {
	Path   string   `yaml:"path" json:"path"`
	Values []string `yaml:"values" json:"values,omitempty"`
	From   float64  `yaml:"from" json:"from,omitempty"`
	To     float64  `yaml:"to" json:"to,omitempty"`
	Step   float64  `yaml:"step" json:"step,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// points returns the sweep's values.
func (s *Sweep) points() []string {
	if len(s.Values) > 0 {
		return s.Values
	}
	var out []string
	if s.Step <= 0 {
		return nil
	}
	for i := 0; ; i++ {
		x := s.From + float64(i)*s.Step
		if x > s.To+s.Step*1e-9 || i > 10000 {
			break
		}
		out = append(out, strconv.FormatFloat(math.Round(x*1e9)/1e9, 'g', -1, 64))
	}
	return out
}

// Rate is a rate in events per second. In a file it is written with a unit:
// "140/min", "2.5/s", "3600/h"; a bare number is per second.
type Rate float64

// PerMinute returns the rate per minute.
func (r Rate) PerMinute() float64 { return float64(r) * 60 }

// String formats the rate as it would be written in a file: per minute
// when that is a whole number and per second is not (2.5 a second is
// "150/min"), or when it is under one a second ("30/min"); otherwise per
// second ("3/s", "2.51/s").
func (r Rate) String() string {
	if r == 0 {
		return "0"
	}
	if pm := r.PerMinute(); pm == math.Trunc(pm) && float64(r) != math.Trunc(float64(r)) || r < 1 {
		return strconv.FormatFloat(pm, 'g', -1, 64) + "/min"
	}
	return strconv.FormatFloat(float64(r), 'g', -1, 64) + "/s"
}

// ParseRate parses "140/min", "2.5/s", "3600/h" or a bare number (per second).
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	num, unit, ok := strings.Cut(s, "/")
	per := 1.0
	if ok {
		switch strings.TrimSpace(unit) {
		case "s", "sec", "second":
			per = 1
		case "m", "min", "minute":
			per = 60
		case "h", "hour":
			per = 3600
		default:
			return 0, fmt.Errorf("unknown unit %q in rate %q (want /s, /min or /h)", unit, s)
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("rate %q is not a number per unit, such as 140/min", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("rate %q is negative", s)
	}
	return Rate(f / per), nil
}

// Pos records where a spec was read from, for error messages. It is zero for
// specs built in Go.
type Pos = policyspec.Pos

// Error is a problem with a scenario: the file, line and field it is about
// and what is wrong (Err), formatted "file:line: field: problem". It is the
// policy language's error, so a policy's problem reads the same in a
// scenario as in a load policy file.
type Error = policyspec.Error

// validator collects the first error found.
type validator struct {
	strictyaml.Checker
}

func (v *validator) errf(p Pos, field, format string, args ...any) {
	v.Errorf(p, field, format, args...)
}

// Validate checks the scenario and returns an *Error for the first problem.
func (s *Scenario) Validate() error {
	v := &validator{strictyaml.Checker{File: s.Pos.File}}
	s.validate(v)
	return v.Err()
}

func (s *Scenario) validate(v *validator) {
	p := s.Pos
	if s.Duration < 0 {
		v.errf(p, "duration", "must not be negative")
	}
	if s.Warmup < 0 || (s.Duration > 0 && s.Warmup >= s.Duration) {
		v.errf(p, "warmup", "must be at least 0 and less than the duration")
	}
	if s.Window < 0 {
		v.errf(p, "window", "must not be negative")
	}
	if s.Sample < 0 {
		v.errf(p, "sample", "must not be negative")
	}
	if s.Schedules != "" && s.Schedules != SchedulesRecoil && s.Schedules != SchedulesBrooker2015 {
		v.errf(p, "schedules", "%q is not a way of drawing waits (want %s or %s)", s.Schedules, SchedulesRecoil, SchedulesBrooker2015)
	}
	if len(s.Services) == 0 {
		v.errf(p, "services", "a scenario needs at least one service")
	}
	if len(s.Clients) == 0 {
		v.errf(p, "clients", "a scenario needs at least one client")
	}
	names := map[string]bool{}
	for i := range s.Policies {
		ps := &s.Policies[i]
		if ps.Name == "" {
			v.errf(ps.Pos, "name", "each compared policy needs a name")
		}
		if names[ps.Name] {
			v.errf(ps.Pos, "name", "policy %q is listed twice", ps.Name)
		}
		names[ps.Name] = true
		validatePolicy(v, ps)
	}
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
			v.errf(p, "target", "no service named %q", s.Target)
		}
	}
	compared := false
	endpoints := map[string]bool{}
	clients := map[string]bool{}
	for i := range s.Clients {
		c := &s.Clients[i]
		if c.Name == "" {
			v.errf(c.Pos, "name", "each client needs a name")
		}
		if clients[c.Name] {
			v.errf(c.Pos, "name", "client %q is listed twice", c.Name)
		}
		clients[c.Name] = true
		endpoints[c.endpoint()] = true
		if _, ok := svc[c.Target]; !ok {
			if c.Target == "" {
				v.errf(c.Pos, "target", "missing: name the service the client calls")
			} else {
				v.errf(c.Pos, "target", "no service named %q", c.Target)
			}
		}
		switch {
		case c.Rate < 0 || math.IsNaN(float64(c.Rate)) || math.IsInf(float64(c.Rate), 0):
			v.errf(c.Pos, "rate", "must be a positive rate")
		case c.Rate > 0 && c.Callers != 0:
			v.errf(c.Pos, "callers", "a client has either a rate (open loop) or callers (closed loop), not both")
		case c.Rate == 0 && c.Callers <= 0:
			v.errf(c.Pos, "rate", "give a rate (open loop) or a positive number of callers (closed loop)")
		}
		if c.Calls < 0 {
			v.errf(c.Pos, "calls", "must not be negative")
		}
		if c.Rate > 0 {
			for _, f := range []struct {
				name string
				zero bool
			}{{"calls", c.Calls == 0}, {"start", c.Start.IsZero()}, {"think", c.Think.IsZero()}, {"resubmit", c.Resubmit.IsZero()}, {"shared_policy", !c.SharedPolicy}} {
				if !f.zero {
					v.errf(c.Pos, f.name, "applies to closed-loop clients (callers) only")
				}
			}
		}
		if c.Rate > 0 && s.Duration == 0 {
			v.errf(p, "duration", "an open-loop client (%s) needs the scenario's duration", c.Name)
		}
		if c.Callers > 10_000_000 {
			v.errf(c.Pos, "callers", "at most 10,000,000")
		}
		c.validateReplicas(v)
		if c.AttemptTimeout < 0 {
			v.errf(c.Pos, "attempt_timeout", "must not be negative")
		}
		c.Start.validate(v)
		c.Think.validate(v)
		c.Resubmit.validate(v)
		if c.Serial != nil {
			i, ok := svc[c.Target]
			c.Serial.validate(v, ok && s.Services[i].Kind == KindRecord)
		}
		if c.Policy.Spec == nil {
			compared = true
		} else {
			validatePolicy(v, c.Policy.Spec)
		}
	}
	for i := range s.Services {
		ss := &s.Services[i]
		ss.validate(v, svc, endpoints)
		if ss.Calls != "" && ss.Policy.Spec == nil {
			compared = true
		}
	}
	// A cycle of calls would never end.
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
	if compared && len(s.Policies) == 0 {
		v.errf(p, "policies", "a client or service uses the compared policy, but none is listed")
	}
	if s.Sweep != nil {
		sw := s.Sweep
		if sw.Path == "" {
			v.errf(sw.Pos, "path", "missing: name the field to sweep, such as services[db].failure")
		}
		if len(sw.Values) > 0 && (sw.From != 0 || sw.To != 0 || sw.Step != 0) {
			v.errf(sw.Pos, "values", "give either values or from/to/step")
		}
		if len(sw.Values) == 0 && (sw.Step <= 0 || sw.To < sw.From) {
			v.errf(sw.Pos, "step", "give values, or from <= to and a positive step")
		}
		if n := len(sw.points()); n > 1000 {
			v.errf(sw.Pos, "step", "%d values; at most 1000", n)
		}
	}
}

func (c *ClientSpec) endpoint() string {
	if c.Endpoint != "" {
		return c.Endpoint
	}
	return c.Name
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
		o := &ss.Outages[i]
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
		case "", "transient", "overloaded", "drop":
			if !o.Service.IsZero() {
				v.errf(o.Pos, "service", "applies only to an outage of class slow")
			}
		case "slow":
			switch {
			case ss.Kind == KindRecord:
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
			v.errf(o.Pos, "class", "unknown class %q (want transient, overloaded, drop or slow)", o.Class)
		}
		if o.RecoverBelow < 0 {
			v.errf(o.Pos, "recover_below", "must not be negative")
		}
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
			validatePolicy(v, ss.Policy.Spec)
		}
	} else if ss.Policy.Spec != nil {
		v.errf(p, "policy", "a policy applies only to a service that calls another (calls)")
	}
}

// validatePolicy checks a policy as the simulator runs it.
func validatePolicy(v *validator, ps *PolicySpec) {
	v.Add(ps.Validate())
	if ps.IdleTimeout != 0 {
		v.errf(ps.Pos, "idle_timeout", "applies to HTTP calls (a load policy file) only: the simulator has no streams")
	}
}
