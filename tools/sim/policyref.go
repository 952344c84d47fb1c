package sim

import (
	"strconv"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
)

// PolicySpec is a retry policy in the policy language every file that
// names a policy shares (package policyspec): a scenario's compared
// policies, and the policy of a client or of a layer that calls another.
// Zero fields mean recoil's defaults, so an empty PolicySpec is recoil's
// default policy: 3 attempts, full jitter from 100 ms, the gRFC A6 token
// bucket, classification honoured.
//
// The simulator honours every field but IdleTimeout (it has no streams).
// A Fallback's targets each reach a service of the scenario, named by the
// target's upstream (or its name); its retries: per-target runs the
// gateways' nested loops (see route.go). A Hedge races slow attempts.
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

// validatePolicy checks a policy as the simulator runs it: each target of
// its fallback chain must reach one of the services svc names.
func validatePolicy(v *validator, ps *PolicySpec, svc map[string]int) {
	v.Add(ps.Validate())
	if ps.IdleTimeout != 0 {
		v.errf(ps.Pos, "idle_timeout", "applies to HTTP calls (a load policy file) only: the simulator has no streams")
	}
	if ps.Fallback == nil || v.Err() != nil {
		return
	}
	for i := range ps.Fallback.Targets {
		t := &ps.Fallback.Targets[i]
		if _, ok := svc[t.UpstreamName()]; ok {
			continue
		}
		p, field := t.Pos, "upstream"
		if t.Upstream == "" {
			field = "name"
		}
		if p.Lines == nil { // built in Go
			p = Pos{File: ps.Pos.File, Line: ps.Pos.Line, Path: ps.Pos.Path + ".fallback.targets[" + strconv.Itoa(i) + "]"}
			if ps.Pos.Path == "" {
				p.Path = p.Path[1:]
			}
		}
		if t.Upstream == "" {
			v.errf(p, field, "no service named %q for the target to reach: name one, or give the target an upstream", t.Name)
		} else {
			v.errf(p, field, "no service named %q", t.Upstream)
		}
	}
}

// validatePolicies checks the compared policies: each named once, each as
// the simulator runs it.
func (s *Scenario) validatePolicies(v *validator, svc map[string]int) {
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
		validatePolicy(v, ps, svc)
	}
}

// policies compiles each policy a run uses once, for each attempt timeout
// it is used with: a client's or service's own, or the compared one, or
// recoil's default.
type policies struct {
	s        *Scenario
	cmp      *PolicySpec // the compared policy of the run; nil if none
	def      *PolicySpec
	compiled map[policyKey]*policy
	svc      map[string]int32 // each service's index by name, for fallback chains; made for the first
}

type policyKey struct {
	ps  *PolicySpec
	tmo time.Duration
}

func newPolicies(s *Scenario, cmp *PolicySpec) *policies {
	return &policies{s: s, cmp: cmp, def: &PolicySpec{Name: "default"}, compiled: map[policyKey]*policy{}}
}

// pick returns the compiled policy ref names, with attempt timeout tmo if
// it is positive.
func (c *policies) pick(ref PolicyRef, tmo time.Duration) *policy {
	ps := ref.Spec
	if ps == nil {
		ps = c.cmp
	}
	if ps == nil {
		ps = c.def
	}
	k := policyKey{ps, tmo}
	if p, ok := c.compiled[k]; ok {
		return p
	}
	if ps.Fallback != nil && c.svc == nil {
		c.svc = make(map[string]int32, len(c.s.Services))
		for i := range c.s.Services {
			c.svc[c.s.Services[i].Name] = int32(i)
		}
	}
	p := compile(ps, c.svc)
	p.brooker = c.s.Schedules == SchedulesBrooker2015
	if tmo > 0 {
		p.attemptTimeout = tmo
	}
	c.compiled[k] = p
	return p
}
