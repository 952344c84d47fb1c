package policyspec

import (
	"reflect"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Fallback describes a recoil.Fallback: the ordered targets one logical
// call may be sent to, each naming the upstream it reaches. In a file:
//
//	fallback:
//	  targets:
//	    - {name: primary}                          # upstream: the service named primary
//	    - {name: second-key, upstream: provider-b, breaker: {consecutive_failures: 3, open: 30s}}
//	    - {name: self-hosted, max_context: 32000}
//	  cooldown: 15s
//
// With Retries left out (or ShareRetries) every attempt, on whichever
// target, counts against the policy's one MaxAttempts, budget and
// deadline, as recoil.Fallback does. RetriesPerTarget is the gateways'
// way instead, which recoil itself does not offer: each target in turn
// gets a whole call of its own under the policy — MaxAttempts attempts,
// retried as the policy classifies — and the next target is tried only
// when that call failed, so a chain of three targets under MaxAttempts 3
// may send nine attempts. The simulator runs it, to compare the two; Build
// leaves Policy.Fallback nil for it.
type Fallback struct {
	// Targets are tried in order; at least one.
	Targets []Target `yaml:"targets" json:"targets"`
	// Cooldown is how long an overloaded or rate-limited target is passed
	// over by later calls (recoil.Fallback.Cooldown); zero means
	// recoil.DefaultCooldown (15 s).
	Cooldown time.Duration `yaml:"cooldown" json:"cooldown,omitempty"`
	// Retired is how long a target whose model was not found is passed
	// over (recoil.Fallback.Retired); zero means recoil.RetiredCooldown
	// (10 min).
	Retired time.Duration `yaml:"retired" json:"retired,omitempty"`
	// Retries is ShareRetries (or empty) or RetriesPerTarget.
	Retries string `yaml:"retries" json:"retries,omitempty"`

	// Pos is where the mapping was read from; zero for one built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

// Values of Fallback.Retries.
const (
	// ShareRetries is recoil's way: the whole chain is one call, under one
	// MaxAttempts, budget and deadline. An empty Retries means it too.
	ShareRetries = "shared"
	// RetriesPerTarget is the LLM gateways' way: each target gets the
	// policy's MaxAttempts of its own, one target after the other (nested
	// loops). The simulator only; recoil has no such mode.
	RetriesPerTarget = "per-target"
)

var retriesModes = []string{RetriesPerTarget, ShareRetries}

// PerTarget reports whether the chain retries per target (the gateways'
// way) rather than under one bound.
func (f *Fallback) PerTarget() bool { return f != nil && f.Retries == RetriesPerTarget }

// Target is one target of a Fallback: a recoil.Target, and the upstream
// its attempts reach.
type Target struct {
	// Name names the target in reports; each target of a chain needs one
	// of its own.
	Name string `yaml:"name" json:"name"`
	// Upstream is what the target's attempts reach — in a scenario, the
	// name of a service; empty means the one named like the target.
	// Build gives it to the recoil.Target as its Value.
	Upstream string `yaml:"upstream" json:"upstream,omitempty"`
	// MaxContext is the longest input the target accepts, in the
	// provider's units (tokens); zero means unknown.
	MaxContext int `yaml:"max_context" json:"max_context,omitempty"`
	// Breaker, if set, is the target's own circuit breaker, asked before
	// each attempt to it besides the policy's.
	Breaker *Breaker `yaml:"breaker" json:"breaker,omitempty"`

	// Pos is where the mapping was read from; zero for one built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

// UpstreamName is the upstream the target reaches: Upstream, or Name when
// it is empty.
func (t *Target) UpstreamName() string {
	if t.Upstream != "" {
		return t.Upstream
	}
	return t.Name
}

// Hedge describes a recoil.Hedge: an attempt slow to answer is raced by
// another copy of it, each hedge an attempt of the one policy. In a file:
//
//	hedge: {quantile: 0.95, delay: 300ms, max_hedges: 1}
type Hedge struct {
	// Delay is how long an attempt runs before it is raced; with Quantile,
	// the delay until enough latencies are known. Zero means
	// recoil.DefaultHedgeDelay (1 s).
	Delay time.Duration `yaml:"delay" json:"delay,omitempty"`
	// Quantile, in [0, 1), races an attempt once it has run longer than
	// that quantile of the recent successful attempts' latencies; zero
	// means the fixed Delay.
	Quantile float64 `yaml:"quantile" json:"quantile,omitempty"`
	// MaxHedges is the most hedges one call starts; zero means 1.
	MaxHedges int `yaml:"max_hedges" json:"max_hedges,omitempty"`

	// Pos is where the mapping was read from; zero for one built in Go.
	Pos Pos `yaml:"-" json:"-"`
}

// maxTargets bounds a chain: recoil keeps the allowances' state of the
// first 64 targets in one word, and no provider list is longer.
const maxTargets = 64

func (f *Fallback) check(c *strictyaml.Checker, p Pos) {
	switch {
	case len(f.Targets) == 0:
		c.Errorf(p, "targets", "missing: a fallback needs at least one target")
	case len(f.Targets) > maxTargets:
		c.Errorf(p, "targets", "%d targets: at most %d", len(f.Targets), maxTargets)
	}
	if f.Cooldown < 0 {
		c.Errorf(p, "cooldown", "must not be negative (0 means recoil's default, 15s)")
	}
	if f.Retired < 0 {
		c.Errorf(p, "retired", "must not be negative (0 means recoil's default, 10m)")
	}
	if f.Retries != "" && !slices.Contains(retriesModes, f.Retries) {
		c.Errorf(p, "retries", "%s", notOneOf("a way of retrying a chain", f.Retries, retriesModes, nil))
	}
	names := map[string]int{}
	for i := range f.Targets {
		t := &f.Targets[i]
		tp := at(p, "targets", t.Pos)
		if t.Pos.Lines == nil {
			// Built in Go: name the element by its index.
			tp.Path = strictyaml.Index(strictyaml.Join(p.Path, "targets"), i)
		}
		if t.Name == "" {
			c.Errorf(tp, "name", "missing: each target needs a name")
		} else if first, dup := names[t.Name]; dup {
			c.Errorf(tp, "name", "target %q is listed twice (first as target %d)", t.Name, first+1)
		}
		names[t.Name] = i
		if t.MaxContext < 0 {
			c.Errorf(tp, "max_context", "must not be negative (0 means unknown)")
		}
		if t.Breaker != nil {
			t.Breaker.check(c, at(tp, "breaker", t.Breaker.Pos))
		}
	}
}

func (h *Hedge) check(c *strictyaml.Checker, p Pos) {
	nonNegative(c, p, num("delay", h.Delay))
	if !finite(h.Quantile) || h.Quantile < 0 || h.Quantile >= 1 {
		c.Errorf(p, "quantile", "must be in [0, 1): 0.95 races the slowest 5 %%; 0 means the fixed delay")
	}
	if h.MaxHedges < 0 {
		c.Errorf(p, "max_hedges", "must not be negative (0 means 1)")
	}
}

// New returns a new recoil.Fallback as the spec describes, each target
// with a fresh breaker and its upstream's name as its Value; nil for a
// chain that retries per target, which recoil does not run.
func (f *Fallback) New() *recoil.Fallback {
	if f.PerTarget() {
		return nil
	}
	rf := &recoil.Fallback{Cooldown: f.Cooldown, Retired: f.Retired, Targets: make([]recoil.Target, len(f.Targets))}
	for i := range f.Targets {
		t := &f.Targets[i]
		rt := &rf.Targets[i]
		rt.Name, rt.MaxContext, rt.Value = t.Name, t.MaxContext, t.UpstreamName()
		if t.Breaker != nil {
			rt.Breaker = t.Breaker.New()
		}
	}
	return rf
}

// New returns a new recoil.Hedge as the spec describes, with no latencies
// recorded.
func (h *Hedge) New() *recoil.Hedge {
	return &recoil.Hedge{Delay: h.Delay, Quantile: h.Quantile, MaxHedges: h.MaxHedges}
}

// decodeFallback decodes a fallback mapping: its targets are a list of
// mappings, each with a breaker of its own.
func decodeFallback(d *strictyaml.Decoder, n *yaml.Node, path string) (*Fallback, error) {
	f := new(Fallback)
	pos, err := d.Struct(n, path, reflect.ValueOf(f).Elem(), func(n *yaml.Node, path string, v reflect.Value) error {
		ts, ok := v.Addr().Interface().(*[]Target)
		if !ok {
			return d.Scalar(n, path, v)
		}
		return d.List(n, path, func(i int, item *yaml.Node) error {
			t, err := decodeTarget(d, item, strictyaml.Index(path, i))
			if t != nil {
				*ts = append(*ts, *t)
			}
			return err
		})
	})
	f.Pos = pos
	return f, err
}

// decodeTarget decodes one target of a chain; a bare name is shorthand
// for {name: it}.
func decodeTarget(d *strictyaml.Decoder, n *yaml.Node, path string) (*Target, error) {
	t := new(Target)
	if n.Kind == yaml.ScalarNode && !strictyaml.IsNull(n) {
		t.Name = n.Value
		t.Pos = Pos{File: d.File, Line: n.Line, Path: path, Lines: map[string]int{"name": n.Line}}
		return t, nil
	}
	pos, err := d.Struct(n, path, reflect.ValueOf(t).Elem(), func(n *yaml.Node, path string, v reflect.Value) error {
		if b, ok := v.Addr().Interface().(**Breaker); ok {
			var err error
			*b, err = decodeBreaker(d, n, path)
			return err
		}
		return d.Scalar(n, path, v)
	})
	t.Pos = pos
	return t, err
}
