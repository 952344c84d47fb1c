package sim

import (
	"time"
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
