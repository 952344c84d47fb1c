package sim

import (
	"math"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/recoil-go/recoil"
)

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

func (c *ClientSpec) endpoint() string {
	if c.Endpoint != "" {
		return c.Endpoint
	}
	return c.Name
}

// validateClients checks every client, and records their endpoints. It
// reports whether a client uses the compared policy.
func (s *Scenario) validateClients(v *validator, svc map[string]int, endpoints map[string]bool) (compared bool) {
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
		c.validate(v, s, svc)
		if c.Policy.Spec == nil {
			compared = true
		} else {
			validatePolicy(v, c.Policy.Spec, svc)
		}
	}
	return compared
}

// validate checks one client of s: its target, how its calls arrive, and
// its own settings.
func (c *ClientSpec) validate(v *validator, s *Scenario, svc map[string]int) {
	if _, ok := svc[c.Target]; !ok {
		if c.Target == "" {
			v.errf(c.Pos, "target", "missing: name the service the client calls")
		} else {
			v.errf(c.Pos, "target", "no service named %q", c.Target)
		}
	}
	c.validateArrivals(v, s)
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
}

// validateArrivals checks that the client is either open loop (a rate) or
// closed loop (callers), with only the fields that apply to it.
func (c *ClientSpec) validateArrivals(v *validator, s *Scenario) {
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
	if c.Rate == 0 {
		return
	}
	for _, f := range []struct {
		name string
		zero bool
	}{{"calls", c.Calls == 0}, {"start", c.Start.IsZero()}, {"think", c.Think.IsZero()}, {"resubmit", c.Resubmit.IsZero()}, {"shared_policy", !c.SharedPolicy}} {
		if !f.zero {
			v.errf(c.Pos, f.name, "applies to closed-loop clients (callers) only")
		}
	}
	if s.Duration == 0 {
		v.errf(s.Pos, "duration", "an open-loop client (%s) needs the scenario's duration", c.Name)
	}
}

// buildClient sets client i up, and schedules its first arrival or each of
// its callers' first calls.
func (w *world) buildClient(b *builder, i int32) {
	cs := &b.s.Clients[i]
	cl := &w.clients[i]
	cl.spec = cs
	cl.ep = b.epIndex[cs.endpoint()]
	cl.target = b.svc[cs.Target]
	cl.rnd = rand.New(rand.NewPCG(b.seed, streamClients+uint64(i)))
	cl.pol = b.pols.pick(cs.Policy, cs.AttemptTimeout)
	cl.start, cl.think, cl.resubmit = cs.Start.sampler(), cs.Think.sampler(), cs.Resubmit.sampler()
	if cs.Serial != nil {
		cl.serial = &serial{time: cs.Serial.Time.sampler()}
	}
	if cs.Rate > 0 || cs.SharedPolicy || cl.pol.spec.stateless() {
		cl.rps = cl.pol.newReplicas(cs.replicas(), w.prnd)
		cl.rp = cl.rps[0]
	}
	if cs.Rate > 0 {
		cl.perNs = float64(cs.Rate) / 1e9
		w.schedule(int64(cl.rnd.ExpFloat64()/cl.perNs), evArrival, i, 0)
		return
	}
	for k := range cs.Callers {
		rp := cl.rp
		if len(cl.rps) > 1 {
			rp = cl.rps[k%len(cl.rps)] // callers spread over the replicas
		}
		ci := w.newCall(-1, i, cl.target, cl.pol, rp, cl.ep)
		c := w.calls.get(ci)
		if c.rp == nil {
			cl.pol.build(&c.own, w.prnd)
			c.rp = &c.own
			w.callBytes = unsafe.Sizeof(call{})
		}
		c.closed = true
		if b.s.JitterSource != nil {
			c.jit = rand.New(b.s.JitterSource(b.seed, k))
		}
		if cs.Calls > 0 {
			c.left = int32(cs.Calls)
		}
		w.schedule(cl.start.draw(cl.rnd), evBegin, ci, 0)
	}
}

// clientResult collects what the run counted of cl; span is the counted
// part of the run, in seconds.
func (w *world) clientResult(cl *client, span float64) ClientResult {
	cr := ClientResult{
		Name: cl.spec.Name, Endpoint: w.endpoints[cl.ep],
		Calls: cl.calls, Succeeded: cl.ok, Failed: cl.failed, Unfinished: cl.calls - cl.ok - cl.failed,
		Attempts: cl.attempts, Throttled: cl.throttled, Resubmitted: cl.resubmits, Latency: percentiles(&cl.lat),
		MostAttempts: cl.most, Hedges: cl.hedges, RefusedHedges: cl.refusedHedges, Wasted: cl.wasted,
	}
	if span > 0 {
		cr.Goodput = float64(cl.ok) / span
	}
	for reason, won := range map[recoil.Reason]float64{recoil.ReasonCircuitOpen: cl.wonBreaker, recoil.ReasonBudget: cl.wonBudget} {
		if cl.reasons[reason&15] > 0 {
			if cr.LikelyWon == nil {
				cr.LikelyWon = map[string]float64{}
			}
			cr.LikelyWon[reason.String()] = math.Round(won)
		}
	}
	for reason, k := range cl.reasons {
		if k > 0 {
			if cr.FailedBy == nil {
				cr.FailedBy = map[string]int64{}
			}
			cr.FailedBy[recoil.Reason(reason).String()] += k
		}
	}
	return cr
}
