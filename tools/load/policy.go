package load

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// Policy is what every logical request of a run goes through: a
// recoil.Policy for a recoilhttp.Transport, and the Transport's settings
// that are not Policy fields. Make one with Preset, ParsePolicy or
// NewPolicy, from the one policy language (package policyspec); each call
// returns fresh state (budget, breaker), which every caller of one run
// shares, as the callers of one client process share one Transport. The
// zero Policy, in a Config, means Preset("default"). A Policy is safe for
// concurrent use once made; give each run its own, or runs share its
// budget and breaker.
type Policy struct {
	// Name names the policy in results.
	Name string
	// About says what it is, in a line.
	About string
	// Policy decides retries and waits, and classifies (a spec's classify
	// mode is its Classify); nil means a zero recoil.Policy of the run's
	// own (the recoil default).
	Policy *recoil.Policy
	// Hop is the hop protocol's budget for each logical request's call
	// tree (recoilhttp.Transport.EdgeBudget, hop.EdgeBudget); zero means the
	// policy's own retries, so sending the headers never limits what the
	// policy allows.
	Hop int
	// IdleTimeout fails a response body that delivers nothing for this
	// long (for a stream, no content event); zero means none.
	IdleTimeout time.Duration

	// spec is what the policy was made from, for WithUpstreams; nil for a
	// Policy made in Go.
	spec *policyspec.Spec
}

// Preset names, for Preset: the policy language's presets (see package
// policyspec for what each is; policyspec.Presets lists them).
const (
	PresetImmediate   = policyspec.PresetImmediate
	PresetWrapper     = policyspec.PresetWrapper
	PresetExponential = policyspec.PresetExponential
	PresetFullJitter  = policyspec.PresetFullJitter
	PresetDefault     = policyspec.PresetDefault
	PresetInteractive = policyspec.PresetInteractive
	PresetBackground  = policyspec.PresetBackground
)

// Preset returns the named preset policy, with fresh state, or an error
// that matches policyspec.ErrUnknownPreset for a name that is not one of
// policyspec.Presets.
func Preset(name string) (Policy, error) {
	s, err := policyspec.Preset(name)
	if err != nil {
		return Policy{}, fmt.Errorf("load: %w", err)
	}
	p, err := NewPolicy(&s)
	p.About = policyspec.PresetAbout(name)
	return p, err
}

// NewPolicy returns the policy s describes, with fresh state, or the
// *PolicyError of a spec that does not validate.
func NewPolicy(s *policyspec.Spec) (Policy, error) {
	if err := s.Validate(); err != nil {
		return Policy{}, err
	}
	// A chain that retries per target is the LLM gateways' nested loops,
	// which recoil does not run: accepting it would run something else.
	if s.Fallback.PerTarget() {
		return Policy{}, s.Fallback.Pos.Errorf("retries", "per-target is the LLM gateways' way, which recoil does not run: the simulator compares it (recoil sim); leave retries out for recoil's one bound")
	}
	spec := *s
	p := Policy{Name: s.Name, Policy: s.Policy(nil), Hop: s.Hop, IdleTimeout: s.IdleTimeout, spec: &spec}
	return p, p.route(nil)
}

// Upstreams returns the upstreams the policy's fallback targets reach that
// are names rather than URLs, in the chain's order: each needs a base URL,
// given with WithUpstreams, before the policy can run. Nil without a
// fallback.
func (p Policy) Upstreams() []string {
	if p.spec == nil || p.spec.Fallback == nil {
		return nil
	}
	var out []string
	for i := range p.spec.Fallback.Targets {
		if u := p.spec.Fallback.Targets[i].UpstreamName(); !isURL(u) {
			out = append(out, u)
		}
	}
	return out
}

// WithUpstreams returns the policy remade, with fresh state, its fallback
// targets sending to base URLs: a target whose upstream is an http or
// https URL ("http://127.0.0.1:8080/backup") is sent there, any other is
// sent to the URL urls gives for its upstream's name. A target's attempts
// go to its base URL joined with the request's path relative to the first
// target's base path (recoilhttp.Endpoint), so the run's URL should be
// under the first target's. A name urls lacks, or a URL that is not valid,
// is an error; so is a name urls gives that no target reaches.
func (p Policy) WithUpstreams(urls map[string]string) (Policy, error) {
	if p.spec == nil || p.spec.Fallback == nil {
		if len(urls) > 0 {
			return Policy{}, fmt.Errorf("load: policy %s has no fallback targets to send to upstreams", p.Name)
		}
		return p, nil
	}
	q, err := NewPolicy(p.spec)
	if err != nil {
		return Policy{}, err
	}
	q.About = p.About
	if q.Name == "" {
		q.Name = p.Name
	}
	return q, q.route(urls)
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// route makes the Value of each fallback target whose upstream has a URL
// (its own, or one urls gives) a recoilhttp.Endpoint at that URL.
func (p Policy) route(urls map[string]string) error {
	if p.spec == nil || p.spec.Fallback == nil || p.Policy == nil || p.Policy.Fallback == nil {
		return nil
	}
	used := map[string]bool{}
	for i := range p.spec.Fallback.Targets {
		st := &p.spec.Fallback.Targets[i]
		up := st.UpstreamName()
		base := up
		if !isURL(up) {
			u, ok := urls[up]
			if !ok {
				if urls == nil {
					continue // left for WithUpstreams
				}
				return st.Pos.Errorf("upstream", "target %q reaches upstream %q, which has no URL: give one (recoil load -upstream %s=URL)", st.Name, up, up)
			}
			used[up], base = true, u
		}
		ep, err := recoilhttp.NewEndpoint(base, nil, "")
		if err != nil {
			return st.Pos.Errorf("upstream", "target %q: %v", st.Name, err)
		}
		p.Policy.Fallback.Targets[i].Value = ep
	}
	for name := range urls {
		if !used[name] {
			return fmt.Errorf("load: no fallback target of policy %s reaches upstream %q", p.Name, name)
		}
	}
	return nil
}

// unrouted returns the first fallback target that has no Endpoint, or "".
func (p Policy) unrouted() (target, upstream string) {
	if p.Policy == nil || p.Policy.Fallback == nil {
		return "", ""
	}
	for _, t := range p.Policy.Fallback.Targets {
		if _, ok := t.Value.(*recoilhttp.Endpoint); !ok {
			up := t.Name
			if s, ok := t.Value.(string); ok && s != "" {
				up = s
			}
			return t.Name, up
		}
	}
	return "", ""
}

// Transport returns a recoilhttp.Transport that sends each attempt through
// base under p, with the hop protocol's headers on, so that a receiving
// gateway can count attempts by number.
func (p Policy) Transport(base http.RoundTripper) *recoilhttp.Transport {
	return &recoilhttp.Transport{
		Base:        base,
		Policy:      p.Policy,
		IdleTimeout: p.IdleTimeout,
		Hop:         true,
		EdgeBudget:  p.Hop,
	}
}

// LoadPolicy reads and parses the policy file at path (see ParsePolicy);
// the policy is named after the file unless it names itself.
func LoadPolicy(path string) (Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Policy{}, err
	}
	p, err := ParsePolicy(path, data)
	if err == nil && p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return p, err
}

// PolicyError reports what is wrong with a policy file, and where: the
// policy language's error (policyspec.Error), with the file's name, the
// line, the field's path and what is wrong.
type PolicyError = policyspec.Error

// ParsePolicy parses a policy file, written in the policy language the
// scenarios share (package policyspec; the repository's
// docs/policy-language.md has every field): YAML that starts from a preset
// (or from recoil's default when it names none) and changes fields of it.
// name is used in errors, which are *PolicyError values naming the line and
// the field.
//
//	name: my-policy        # the name in results; default the file's name
//	preset: full-jitter    # start from this preset
//	max_attempts: 6
//	backoff: {kind: full-jitter, base: 60ms, max: 10s}
//	overload_backoff: {kind: exponential, base: 1s}  # left out: recoil's own, not backoff
//	timeout: 10s           # the whole logical request, waits included
//	attempt_timeout: 2s
//	idle_timeout: 5s
//	classify: retry-everything                            # or default, timeouts
//	budget: none           # none, default, or {kind: token-bucket, max_tokens: 10, token_ratio: 0.1}
//	breaker: {consecutive_failures: 5, open: 1s}         # none, default, or settings
func ParsePolicy(name string, data []byte) (Policy, error) {
	s, err := policyspec.Parse(name, data)
	if err != nil {
		return Policy{}, err
	}
	p, err := NewPolicy(&s)
	p.About = "from " + name
	return p, err
}
