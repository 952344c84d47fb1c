package sim

import (
	"math/rand/v2"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// maxReplicas bounds ClientSpec.Replicas.
const maxReplicas = 100_000

func (c *ClientSpec) validateReplicas(v *validator) {
	switch {
	case c.Replicas < 0:
		v.errf(c.Pos, "replicas", "must not be negative (0 means 1)")
	case c.Replicas > maxReplicas:
		v.errf(c.Pos, "replicas", "at most 100,000")
	case c.Replicas > 1 && c.Callers > 0 && !c.SharedPolicy:
		v.errf(c.Pos, "replicas", "a closed-loop client's callers each have their own policy; replicas needs shared_policy: true")
	}
}

// replicas returns the client's replica count, at least 1.
func (c *ClientSpec) replicas() int { return max(c.Replicas, 1) }

// fleetScope reports whether the policy's budget is one for every replica.
func (ps simSpec) fleetScope() bool {
	return ps.Budget != nil && ps.Budget.Scope == policyspec.ScopeFleet
}

// newReplicas returns n fresh policies for p, one per replica; when the
// budget's scope is fleet they all share the first one's budget, so the
// replicas together retry what one budget allows.
func (p *policy) newReplicas(n int, rnd *rand.Rand) []*recoil.Policy {
	rps := make([]*recoil.Policy, n)
	for i := range rps {
		rps[i] = p.newPolicy(rnd)
		if i > 0 && p.spec.fleetScope() {
			rps[i].Budget = rps[0].Budget
		}
	}
	return rps
}
