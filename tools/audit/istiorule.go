package audit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Istio's defaults for a DestinationRule's retryBudget (pilot's
// applyRetryBudget), the same as Envoy's retry_budget.
const (
	istioDefaultBudgetPercent = 20.0
	istioDefaultMinRetryConc  = 3
)

// DestinationRule is what the audit reads of an Istio DestinationRule:
// its traffic policy's retryBudget, which bounds the retries to its host
// as a share of the active requests, connectionPool.http.maxRetries,
// which caps the retries in flight when there is no budget, and
// outlierDetection, which ejects failing hosts. A subset's traffic policy
// overrides these field by field, and a port's (portLevelSettings)
// replaces them, as Istio merges them for the cluster a route's
// destination — host, subset and port — sends to.
type DestinationRule struct {
	Name string `json:"name"`
	Host string `json:"host"`
	At   Source `json:"at"`
	// MaxRetries is the top-level connectionPool.http.maxRetries; zero
	// when not set (Istio then lets any number be in flight).
	MaxRetries   int    `json:"max_retries,omitempty"`
	MaxRetriesAt Source `json:"max_retries_at,omitzero"`
	// RetryBudget is the top-level retryBudget's percent; zero when the
	// rule has none.
	RetryBudget   float64 `json:"retry_budget_percent,omitempty"`
	RetryBudgetAt Source  `json:"retry_budget_at,omitzero"`
	// Outlier describes the top-level outlierDetection, if any.
	Outlier string `json:"outlier,omitempty"`
	// Subsets are the names of the subsets with a traffic policy of their
	// own.
	Subsets []string `json:"subsets,omitempty"`

	top     istioPolicy
	subsets map[string]istioPolicy
}

// istioDest is one destination of an Istio route.
type istioDest struct {
	host, subset string
	port         int
}

// istioPolicy is a traffic policy, as far as the audit reads it; each
// part is set only if the policy writes it.
type istioPolicy struct {
	pool    *istioPool   // connectionPool
	budget  *istioBudget // retryBudget
	outlier *string      // outlierDetection, described
	ports   map[int]istioPolicy
}

type istioPool struct {
	maxRetries int // connectionPool.http.maxRetries; 0: not set
	at         Source
}

type istioBudget struct {
	percent float64
	conc    int
	at      Source
}

// forPort returns the policy for port: a port-level setting replaces the
// policy whole — what it omits gets the default, and it has no retry
// budget — (Istio's GetPortLevelTrafficPolicy); and says whether one did.
func (p istioPolicy) forPort(port int) (istioPolicy, bool) {
	if pp, ok := p.ports[port]; ok && port != 0 {
		return pp, true
	}
	return istioPolicy{pool: p.pool, budget: p.budget, outlier: p.outlier}, false
}

// resolve returns the policy for a destination's subset and port: the
// rule's, the subset's parts over it (Istio's MergeSubsetTrafficPolicy).
func (dr *DestinationRule) resolve(d istioDest) istioPolicy {
	out, _ := dr.top.forPort(d.port)
	sub, ok := dr.subsets[d.subset]
	if !ok || d.subset == "" {
		return out
	}
	sp, hasPort := sub.forPort(d.port)
	if sp.pool != nil || hasPort {
		out.pool = sp.pool
	}
	if sp.outlier != nil || hasPort {
		out.outlier = sp.outlier
	}
	if sp.budget != nil {
		out.budget = sp.budget
	}
	return out
}

// applyRules applies the DestinationRule for route's destination host —
// the first destination a rule names — through the policy its subset and
// port choose: a retryBudget bounds the retries as Envoy's retry_budget
// does (and replaces maxRetries), else connectionPool.http.maxRetries caps
// those in flight; outlierDetection is noted. It is idempotent: a rule
// read twice changes nothing more.
func applyRules(r *Retry, route *Route, rules []DestinationRule) {
	dests := route.dests
	if len(dests) == 0 {
		for _, h := range route.Destinations {
			dests = append(dests, istioDest{host: h})
		}
	}
	for _, d := range dests {
		for i := range rules {
			dr := &rules[i]
			if shortHost(dr.Host) != shortHost(d.host) {
				continue
			}
			dr.resolve(d).apply(r, dr.Name, d.subset)
			return
		}
	}
	if r.Attempts > 1 && r.Budget.InFlight == 0 && r.Budget.Kind == "" {
		r.Budget.Describe = "a VirtualService has no retry budget; Istio lets any number of retries be in flight unless a DestinationRule's retryBudget or connectionPool.http.maxRetries bounds them"
	}
}

// apply gives r what policy p of DestinationRule name bounds.
func (p istioPolicy) apply(r *Retry, name, subset string) {
	who := "DestinationRule " + name
	if subset != "" {
		who += " (subset " + subset + ")"
	}
	switch {
	case r.Budget.Kind != "":
	case p.budget != nil:
		b := p.budget
		r.Budget = Budget{Kind: BudgetRatio, RetryRatio: b.percent / 100, At: b.at,
			Describe: fmt.Sprintf("%s's retryBudget: retries at most %s%% of active requests (at least %d in flight)", who, trimFloat(b.percent), b.conc)}
	case p.pool != nil && p.pool.maxRetries > 0:
		r.Budget = Budget{InFlight: p.pool.maxRetries, InFlightAt: p.pool.at, At: p.pool.at,
			Describe: fmt.Sprintf("a VirtualService has no retry budget; %s caps retries in flight at %d (connectionPool.http.maxRetries)", who, p.pool.maxRetries)}
	}
	if p.outlier != nil {
		note := who + ": " + *p.outlier
		if !slices.Contains(r.Notes, note) {
			r.Notes = append(r.Notes, note)
		}
	}
}

// istioRule reads a DestinationRule: its host, its traffic policy and its
// subsets' (connectionPool.http.maxRetries, retryBudget,
// outlierDetection, portLevelSettings).
func istioRule(d *doc, root *yaml.Node, name string) (DestinationRule, error) {
	dr := DestinationRule{Name: name, At: d.at(root)}
	spec := strictyaml.Lookup(root, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode {
		return dr, d.errorf(root, "spec", "missing: a DestinationRule's host is in spec.host")
	}
	if h := strictyaml.Lookup(spec, "host"); h != nil && h.Kind == yaml.ScalarNode {
		dr.Host = h.Value
	}
	var err error
	if dr.top, err = istioTrafficPolicy(d, strictyaml.Lookup(spec, "trafficPolicy"), "spec.trafficPolicy"); err != nil {
		return dr, err
	}
	if p := dr.top.pool; p != nil {
		dr.MaxRetries, dr.MaxRetriesAt = p.maxRetries, p.at
	}
	if b := dr.top.budget; b != nil {
		dr.RetryBudget, dr.RetryBudgetAt = b.percent, b.at
	}
	if o := dr.top.outlier; o != nil {
		dr.Outlier = *o
	}
	subs := strictyaml.Lookup(spec, "subsets")
	if subs == nil || subs.Kind != yaml.SequenceNode {
		return dr, nil
	}
	dr.subsets = map[string]istioPolicy{}
	for i, s := range subs.Content {
		n := strictyaml.Lookup(s, "name")
		tp := strictyaml.Lookup(s, "trafficPolicy")
		if n == nil || n.Kind != yaml.ScalarNode || tp == nil {
			continue
		}
		p, err := istioTrafficPolicy(d, tp, strictyaml.Index("spec.subsets", i)+".trafficPolicy")
		if err != nil {
			return dr, err
		}
		dr.subsets[n.Value] = p
		dr.Subsets = append(dr.Subsets, n.Value)
	}
	return dr, nil
}

// istioTrafficPolicy reads a traffic policy at path, with its
// portLevelSettings; tp may be nil.
func istioTrafficPolicy(d *doc, tp *yaml.Node, path string) (istioPolicy, error) {
	p, err := istioPolicyParts(d, tp, path, true)
	if err != nil || tp == nil {
		return p, err
	}
	pls := strictyaml.Lookup(tp, "portLevelSettings")
	if pls == nil || pls.Kind != yaml.SequenceNode {
		return p, nil
	}
	p.ports = map[int]istioPolicy{}
	for i, s := range pls.Content {
		sp := strictyaml.Index(path+".portLevelSettings", i)
		num := strictyaml.Lookup(strictyaml.Lookup(s, "port"), "number")
		if num == nil || num.Kind != yaml.ScalarNode {
			continue
		}
		port, err := strconv.Atoi(num.Value)
		if err != nil {
			return p, d.errorf(num, sp+".port.number", "want a port number, got %q", num.Value)
		}
		pp, err := istioPolicyParts(d, s, sp, false)
		if err != nil {
			return p, err
		}
		p.ports[port] = pp
	}
	return p, nil
}

// istioPolicyParts reads connectionPool, outlierDetection and (when
// budget) retryBudget of the traffic policy tp at path.
func istioPolicyParts(d *doc, tp *yaml.Node, path string, budget bool) (istioPolicy, error) {
	var p istioPolicy
	if tp == nil || tp.Kind != yaml.MappingNode {
		return p, nil
	}
	if cp := strictyaml.Lookup(tp, "connectionPool"); cp != nil {
		p.pool = &istioPool{}
		hp := path + ".connectionPool.http"
		h := strictyaml.Lookup(cp, "http")
		if h == nil || h.Kind != yaml.MappingNode {
			h = &yaml.Node{Kind: yaml.MappingNode}
		}
		if mr, err := d.field(h, hp, "maxRetries"); err != nil {
			return p, err
		} else if mr != nil {
			if p.pool.maxRetries, err = d.integer(mr, hp+".maxRetries", 0, 1<<31-1); err != nil {
				return p, err
			}
			p.pool.at = d.at(mr)
		}
	}
	if od := strictyaml.Lookup(tp, "outlierDetection"); od != nil && od.Kind == yaml.MappingNode {
		s := outlierNote(od)
		p.outlier = &s
	}
	if rb := strictyaml.Lookup(tp, "retryBudget"); budget && rb != nil {
		b, err := istioRetryBudget(d, rb, path+".retryBudget")
		if err != nil {
			return p, err
		}
		p.budget = b
	}
	return p, nil
}

// istioRetryBudget reads a retryBudget: percent (a number or {value: n},
// 0 to 100, default 20) and minRetryConcurrency (default 3).
func istioRetryBudget(d *doc, rb *yaml.Node, path string) (*istioBudget, error) {
	rb, err := d.mapping(rb, path)
	if err != nil {
		return nil, err
	}
	b := &istioBudget{percent: istioDefaultBudgetPercent, conc: istioDefaultMinRetryConc, at: d.at(rb)}
	if pc, err := d.field(rb, path, "percent"); err != nil {
		return nil, err
	} else if pc != nil {
		if b.percent, err = d.number(unwrapValue(pc), path+".percent", 0, 100); err != nil {
			return nil, err
		}
		b.at = d.at(pc)
	}
	if mc, err := d.field(rb, path, "minRetryConcurrency"); err != nil {
		return nil, err
	} else if mc != nil {
		n, err := d.integer(mc, path+".minRetryConcurrency", 0, 1<<32-1)
		if err != nil {
			return nil, err
		}
		if n > 0 { // Istio reads 0 as unset
			b.conc = n
		}
	}
	return b, nil
}

// outlierNote describes an outlierDetection: what ejects a host, and that
// it bounds nothing when every host fails — at most maxEjectionPercent of
// them (10 % by default) are ejected, and Envoy's panic threshold sends to
// all hosts once too few are healthy.
func outlierNote(od *yaml.Node) string {
	n := "5"
	for _, k := range []string{"consecutive5xxErrors", "consecutiveErrors", "consecutiveGatewayErrors"} {
		if v := strictyaml.Lookup(od, k); v != nil && v.Kind == yaml.ScalarNode {
			n = strings.TrimSpace(v.Value)
			break
		}
	}
	maxEject := "10"
	if v := strictyaml.Lookup(od, "maxEjectionPercent"); v != nil && v.Kind == yaml.ScalarNode {
		maxEject = v.Value
	}
	return fmt.Sprintf("outlierDetection ejects a host after %s consecutive errors, at most %s%% of them (line %d): it moves retries to healthy hosts, and bounds nothing when the whole service fails", n, maxEject, od.Line)
}
