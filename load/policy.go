package load

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/recoilhttp"
)

// Policy is what every logical request of a run goes through: a
// recoil.Policy for a recoilhttp.Transport, and how that Transport
// classifies. Make one with Preset or ParsePolicy; each call returns fresh
// state (budget, breaker), which every caller of one run shares, as the
// callers of one client process share one Transport. The zero Policy, in a
// Config, means Preset("default"). A Policy is safe for concurrent use
// once made; give each run its own, or runs share its budget and breaker.
type Policy struct {
	// Name names the policy in results.
	Name string
	// About says what it is, in a line.
	About string
	// Policy decides retries and waits; nil means a zero recoil.Policy of
	// the run's own (the recoil default).
	Policy *recoil.Policy
	// RetryEverything classifies every failed attempt — any status of 400
	// or more, any transport error — as transient, ignoring Retry-After
	// and x-should-retry: the retry rule "anything that is not a 2xx"
	// that seed 000 finds in most services.
	RetryEverything bool
	// IdleTimeout fails a response body that delivers nothing for this
	// long (for a stream, no content event); zero means none.
	IdleTimeout time.Duration
}

// Preset names, for Preset.
const (
	// PresetImmediate retries every 20 ms whatever failed, up to 1000
	// attempts, with no budget: seed 004's NoBackoff, "what gets written
	// when the retry is added in a hurry".
	PresetImmediate = "immediate"
	// PresetSeed000 is seed 000's wrapper: 5 attempts, waits doubling
	// from 1 s, retrying anything that is not a 2xx, with no budget.
	PresetSeed000 = "seed000"
	// PresetExponential waits 60 ms doubling to a 10 s cap, with no
	// jitter, up to 8 attempts, with no budget: seed 004's schedule before
	// it was shaken, and what most hand-written loops deploy.
	PresetExponential = "exponential"
	// PresetFullJitter waits a uniform time in [0, 60 ms doubling], capped
	// at 10 s, up to 8 attempts, with no budget: seed 004's "double each
	// time, then shake it" (Brooker's full jitter).
	PresetFullJitter = "full-jitter"
	// PresetDefault is the recoil default — classification, 3 attempts,
	// full jitter, Retry-After honoured, the A6 token bucket shared by the
	// run's callers — plus a circuit breaker from package breaker with
	// its defaults but a 1 s open period: the 30 s default would keep a
	// sub-second outage's callers out for 30 s.
	PresetDefault = "default"
)

// Presets lists the preset names, in the order of the table they are
// usually compared in.
var Presets = []string{PresetImmediate, PresetSeed000, PresetExponential, PresetFullJitter, PresetDefault}

// ErrUnknownPreset is returned by Preset for a name not in Presets.
var ErrUnknownPreset = errors.New("load: unknown preset")

// Preset returns the named preset policy, with fresh state.
func Preset(name string) (Policy, error) {
	switch name {
	case PresetImmediate:
		wait := backoff.Constant(20 * time.Millisecond)
		return Policy{Name: name, About: "every 20 ms, whatever failed, up to 1000 attempts (seed 004's NoBackoff)",
			Policy:          &recoil.Policy{MaxAttempts: 1000, Backoff: wait, OverloadBackoff: wait, Budget: recoil.NoBudget},
			RetryEverything: true}, nil
	case PresetSeed000:
		wait := backoff.Exponential{Base: time.Second}
		return Policy{Name: name, About: "5 attempts, 1 s doubling, anything that is not a 2xx (seed 000's wrapper)",
			Policy:          &recoil.Policy{MaxAttempts: 5, Backoff: wait, OverloadBackoff: wait, Budget: recoil.NoBudget},
			RetryEverything: true}, nil
	case PresetExponential:
		wait := backoff.Exponential{Base: 60 * time.Millisecond, Max: 10 * time.Second}
		return Policy{Name: name, About: "60 ms doubling, no jitter, up to 8 attempts",
			Policy: &recoil.Policy{MaxAttempts: 8, Backoff: wait, OverloadBackoff: wait, Budget: recoil.NoBudget}}, nil
	case PresetFullJitter:
		wait := backoff.FullJitter{Base: 60 * time.Millisecond, Max: 10 * time.Second}
		return Policy{Name: name, About: "full jitter from 60 ms doubling, up to 8 attempts (seed 004)",
			Policy: &recoil.Policy{MaxAttempts: 8, Backoff: wait, OverloadBackoff: wait, Budget: recoil.NoBudget}}, nil
	case PresetDefault:
		return Policy{Name: name, About: "the recoil default: classified, 3 attempts, full jitter, A6 budget, breaker (1 s open)",
			Policy: &recoil.Policy{Breaker: breaker.New(breaker.Settings{OpenDuration: time.Second})}}, nil
	}
	return Policy{}, fmt.Errorf("%w %q (want one of %s)", ErrUnknownPreset, name, strings.Join(Presets, ", "))
}

// Transport returns a recoilhttp.Transport that sends each attempt through
// base under p, with the hop protocol's headers on, so that a receiving
// gateway can count attempts by number.
func (p Policy) Transport(base http.RoundTripper) *recoilhttp.Transport {
	t := &recoilhttp.Transport{
		Base:        base,
		Policy:      p.Policy,
		IdleTimeout: p.IdleTimeout,
		Hop:         true,
	}
	if t.Policy != nil {
		// The hop budget for the call tree is the policy's own retries, so
		// sending the headers never limits what the policy allows.
		t.EdgeBudget = max(t.Policy.MaxAttempts, recoil.DefaultMaxAttempts) - 1
	}
	if p.RetryEverything {
		t.Classify = retryEverything
	}
	return t
}

func retryEverything(_ *http.Request, resp *http.Response, err error) recoil.Verdict {
	switch {
	case err != nil:
		return recoil.Verdict{Class: recoil.ClassTransient, Reason: "retry everything: " + err.Error()}
	case resp.StatusCode >= 400:
		return recoil.Verdict{Class: recoil.ClassTransient, Reason: "retry everything: not a 2xx (" + strconv.Itoa(resp.StatusCode) + ")"}
	}
	return recoil.Verdict{}
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

// PolicyError reports what is wrong with a policy file, and where.
type PolicyError struct {
	// File is the name given to ParsePolicy.
	File string
	// Line is the offending field's line; 0 for a YAML syntax error, whose
	// own message names the line.
	Line int
	// Field is the offending field's path; empty for a syntax error.
	Field string
	// Err says what is wrong.
	Err error
}

// Error formats the error as file:line: field: what is wrong.
func (e *PolicyError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	s += ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns Err.
func (e *PolicyError) Unwrap() error { return e.Err }

// ParsePolicy parses a policy file: YAML that starts from a preset (or
// from the zero recoil.Policy when it names none) and changes fields of it.
// name is used in errors. Durations are Go durations ("60ms").
//
//	name: my-policy        # the name in results; default the file's name
//	preset: full-jitter    # start from this preset
//	max_attempts: 6
//	backoff: {kind: full-jitter, base: 60ms, max: 10s, multiplier: 2}
//	overload_backoff: {kind: exponential, base: 1s}  # default: as backoff when given
//	max_server_wait: 60s
//	timeout: 10s           # the whole logical request, waits included
//	attempt_timeout: 2s
//	idle_timeout: 5s
//	retry_everything: false
//	budget: none           # none, default, or {max_tokens: 10, token_ratio: 0.1}
//	breaker: {consecutive_failures: 5, open: 1s}   # none, default, or settings
//
// Backoff kinds: none, constant (base), exponential, full-jitter,
// equal-jitter, decorrelated (base, max).
func ParsePolicy(name string, data []byte) (Policy, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Policy{}, &PolicyError{File: name, Err: err}
	}
	d := &pdecoder{file: name}
	if len(doc.Content) == 0 {
		return Policy{Name: "", About: "the recoil default", Policy: &recoil.Policy{}}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Policy{}, d.fail(root, "", "a policy file is a mapping of fields")
	}
	// The preset first, wherever it is written: the rest changes it.
	p := Policy{Policy: &recoil.Policy{}, About: "from " + name}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k, v := root.Content[i], root.Content[i+1]; k.Value == "preset" {
			pre, err := Preset(v.Value)
			if err != nil {
				return Policy{}, d.fail(v, "preset", "%v", err)
			}
			p = pre
			p.Name, p.About = "", "from "+name+", based on "+pre.Name
		}
	}
	rp := p.Policy
	var backoffSet, overloadSet bool
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if line, dup := seen[k.Value]; dup {
			return Policy{}, d.fail(k, k.Value, "given twice (first on line %d)", line)
		}
		seen[k.Value] = k.Line
		var err error
		switch k.Value {
		case "preset":
		case "name":
			p.Name, err = d.str(v, "name")
		case "max_attempts":
			rp.MaxAttempts, err = d.positive(v, "max_attempts")
		case "backoff":
			rp.Backoff, err = d.schedule(v, "backoff")
			backoffSet = true
		case "overload_backoff":
			rp.OverloadBackoff, err = d.schedule(v, "overload_backoff")
			overloadSet = true
		case "max_server_wait":
			rp.MaxServerWait, err = d.duration(v, "max_server_wait")
		case "timeout":
			rp.Timeout, err = d.duration(v, "timeout")
		case "attempt_timeout":
			rp.AttemptTimeout, err = d.duration(v, "attempt_timeout")
		case "idle_timeout":
			p.IdleTimeout, err = d.duration(v, "idle_timeout")
		case "retry_everything":
			p.RetryEverything, err = d.boolean(v, "retry_everything")
		case "budget":
			rp.Budget, err = d.budget(v)
		case "breaker":
			rp.Breaker, err = d.breaker(v)
		default:
			err = d.fail(k, k.Value, "unknown field %q (want one of %s)", k.Value,
				"name, preset, max_attempts, backoff, overload_backoff, max_server_wait, timeout, attempt_timeout, idle_timeout, retry_everything, budget, breaker")
		}
		if err != nil {
			return Policy{}, err
		}
	}
	if backoffSet && !overloadSet {
		rp.OverloadBackoff = rp.Backoff
	}
	return p, nil
}

type pdecoder struct{ file string }

func (d *pdecoder) fail(n *yaml.Node, field, format string, args ...any) error {
	return &PolicyError{File: d.file, Line: n.Line, Field: field, Err: fmt.Errorf(format, args...)}
}

func (d *pdecoder) scalar(n *yaml.Node, field, want string) (string, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return "", d.fail(n, field, "want %s", want)
	}
	return n.Value, nil
}

func (d *pdecoder) str(n *yaml.Node, field string) (string, error) {
	return d.scalar(n, field, "a string")
}

func (d *pdecoder) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := d.scalar(n, field, "a duration such as 60ms")
	if err != nil {
		return 0, err
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, d.fail(n, field, "%q is not a duration (write it as 60ms, 1.5s)", s)
	case v < 0:
		return 0, d.fail(n, field, "%v is negative", v)
	}
	return v, nil
}

func (d *pdecoder) positive(n *yaml.Node, field string) (int, error) {
	s, err := d.scalar(n, field, "a whole number")
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return 0, d.fail(n, field, "%q is not a whole number of 1 or more", s)
	}
	return v, nil
}

func (d *pdecoder) number(n *yaml.Node, field string) (float64, error) {
	s, err := d.scalar(n, field, "a number")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v != v {
		return 0, d.fail(n, field, "%q is not a number of 0 or more", s)
	}
	return v, nil
}

func (d *pdecoder) boolean(n *yaml.Node, field string) (bool, error) {
	s, err := d.scalar(n, field, "true or false")
	if err != nil {
		return false, err
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, d.fail(n, field, "%q is not true or false", s)
	}
	return v, nil
}

// fields walks a mapping node, calling f for each field, and reports
// fields not in known.
func (d *pdecoder) fields(n *yaml.Node, field string, known []string, f func(k string, v *yaml.Node, path string) error) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return d.fail(n, field, "want a mapping of %s", strings.Join(known, ", "))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := field + "." + k.Value
		if line, dup := seen[k.Value]; dup {
			return d.fail(k, path, "given twice (first on line %d)", line)
		}
		seen[k.Value] = k.Line
		if !contains(known, k.Value) {
			return d.fail(k, path, "unknown field %q (want one of %s)", k.Value, strings.Join(known, ", "))
		}
		if err := f(k.Value, v, path); err != nil {
			return err
		}
	}
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Backoff kinds a policy file may name.
var kinds = []string{"none", "constant", "exponential", "full-jitter", "equal-jitter", "decorrelated"}

func (d *pdecoder) schedule(n *yaml.Node, field string) (backoff.Schedule, error) {
	var kind string
	var base, maxWait time.Duration
	var mult float64
	kindLine := n
	err := d.fields(n, field, []string{"kind", "base", "max", "multiplier"}, func(k string, v *yaml.Node, path string) error {
		var err error
		switch k {
		case "kind":
			kind, err = d.str(v, path)
			kindLine = v
		case "base":
			base, err = d.duration(v, path)
		case "max":
			maxWait, err = d.duration(v, path)
		case "multiplier":
			mult, err = d.number(v, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch kind {
	case "none":
		return backoff.None{}, nil
	case "constant":
		return backoff.Constant(base), nil
	case "exponential":
		return backoff.Exponential{Base: base, Multiplier: mult, Max: maxWait}, nil
	case "full-jitter":
		return backoff.FullJitter{Base: base, Multiplier: mult, Max: maxWait}, nil
	case "equal-jitter":
		return backoff.EqualJitter{Base: base, Multiplier: mult, Max: maxWait}, nil
	case "decorrelated":
		return backoff.Decorrelated{Base: base, Max: maxWait}, nil
	}
	sorted := append([]string(nil), kinds...)
	sort.Strings(sorted)
	return nil, d.fail(kindLine, field+".kind", "%q is not a backoff kind (want one of %s)", kind, strings.Join(sorted, ", "))
}

func (d *pdecoder) budget(n *yaml.Node) (recoil.Budget, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "none":
			return recoil.NoBudget, nil
		case "default":
			return nil, nil
		}
		return nil, d.fail(n, "budget", "%q: want none, default, or {max_tokens, token_ratio}", n.Value)
	}
	var c budget.TokenBucketConfig
	err := d.fields(n, "budget", []string{"max_tokens", "token_ratio"}, func(k string, v *yaml.Node, path string) error {
		var err error
		if k == "max_tokens" {
			c.MaxTokens, err = d.number(v, path)
		} else {
			c.TokenRatio, err = d.number(v, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return budget.NewTokenBucket(c), nil
}

func (d *pdecoder) breaker(n *yaml.Node) (recoil.Breaker, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "none":
			return nil, nil
		case "default":
			return breaker.New(breaker.Settings{}), nil
		}
		return nil, d.fail(n, "breaker", "%q: want none, default, or settings", n.Value)
	}
	var s breaker.Settings
	err := d.fields(n, "breaker", []string{"consecutive_failures", "failure_rate", "window", "min_requests", "open", "max_probes", "success_threshold"},
		func(k string, v *yaml.Node, path string) error {
			var err error
			switch k {
			case "consecutive_failures":
				s.ConsecutiveFailures, err = d.positive(v, path)
			case "failure_rate":
				s.FailureRate, err = d.number(v, path)
			case "window":
				s.Window, err = d.duration(v, path)
			case "min_requests":
				s.MinRequests, err = d.positive(v, path)
			case "open":
				s.OpenDuration, err = d.duration(v, path)
			case "max_probes":
				s.MaxProbes, err = d.positive(v, path)
			case "success_threshold":
				s.SuccessThreshold, err = d.positive(v, path)
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	return breaker.New(s), nil
}
