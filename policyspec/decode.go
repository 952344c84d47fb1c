package policyspec

import (
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/internal/strictyaml"
)

// Spellings that were renamed when scenarios and load policy files came to
// share one language. A file that still uses one gets an error naming the
// new spelling: a warning nobody prints would leave the file meaning what
// its author did not write.
var (
	renamedSpec = map[string]string{
		"attempts":         "max_attempts",
		"retry_everything": "classify: retry-everything",
	}
	renamedBackoff  = map[string]string{"cap": "max", "full": BackoffFullJitter, "equal": BackoffEqualJitter}
	renamedBudget   = map[string]string{"tokens": "max_tokens", "ratio": "token_ratio", "min_per_sec": "min_retries_per_sec"}
	renamedBreaker  = map[string]string{"failures": "consecutive_failures"}
	renamedClassify = map[string]string{"classify": ClassifyDefault}
)

var (
	specFields    = []string{"name", "preset", "max_attempts", "backoff", "overload_backoff", "max_server_wait", "min_attempt", "timeout", "attempt_timeout", "budget", "breaker", "limit", "classify", "hop", "idle_timeout"}
	backoffFields = []string{"kind", "base", "max", "multiplier", "jitter"}
	budgetFields  = []string{"kind", "max_tokens", "token_ratio", "percent", "ttl", "min_retries_per_sec", "capacity", "retry_cost", "timeout_cost", "throttle_cost", "no_retry_increment", "k", "window"}
	breakerFields = []string{"consecutive_failures", "open", "failure_rate", "window", "min_requests", "max_probes", "success_threshold"}
)

// Load reads and parses the policy file at path (see Parse).
func Load(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	return Parse(path, data)
}

// Parse reads a policy file: one YAML document whose mapping is a policy
// (see the package documentation). file names it in errors. An empty file
// is the zero Spec, recoil's default policy. Every problem — a syntax
// error, an unknown or renamed field, a value of the wrong type or out of
// range — is an *Error naming the file, the line and the field.
func Parse(file string, data []byte) (Spec, error) {
	root, err := strictyaml.Read(file, data)
	if err != nil || root == nil {
		return Spec{}, err
	}
	return Decode(file, root, "")
}

// Decode decodes the policy mapping n, found in file at path ("" for a
// whole file, "policies[careful]" in a scenario), and checks it. A
// "preset" field is applied first, wherever it is written; the fields
// written replace the preset's, a mapping (backoff, budget, breaker) as a
// whole. Problems are *Error values naming file, line and field.
func Decode(file string, n *yaml.Node, path string) (Spec, error) {
	d := &strictyaml.Decoder{File: file}
	n, err := d.Visit(n, path)
	if err != nil {
		return Spec{}, err
	}
	var s Spec
	if pn := strictyaml.Lookup(n, "preset"); pn != nil && !strictyaml.IsNull(pn) {
		name, err := d.String(pn, strictyaml.Join(path, "preset"))
		if err != nil {
			return Spec{}, err
		}
		if s, err = Preset(name); err != nil {
			return Spec{}, d.Errorf(pn, strictyaml.Join(path, "preset"), "%v", err)
		}
		s.Name = "" // the file's policy is its own, not the preset
	}
	if err := renamed(d, n, path, renamedSpec); err != nil {
		return Spec{}, err
	}
	s.Pos, err = d.Mapping(n, path, specFields, func(k string, v *yaml.Node, path string) error {
		var err error
		switch k {
		case "name":
			s.Name, err = d.String(v, path)
		case "max_attempts":
			s.MaxAttempts, err = d.Int(v, path)
		case "backoff":
			s.Backoff, err = decodeBackoff(d, v, path)
		case "overload_backoff":
			s.OverloadBackoff, err = decodeBackoff(d, v, path)
		case "max_server_wait":
			s.MaxServerWait, err = d.Duration(v, path)
		case "min_attempt":
			s.MinAttempt, err = d.Duration(v, path)
		case "timeout":
			s.Timeout, err = d.Duration(v, path)
		case "attempt_timeout":
			s.AttemptTimeout, err = d.Duration(v, path)
		case "budget":
			s.Budget, err = decodeBudget(d, v, path)
		case "breaker":
			s.Breaker, err = decodeBreaker(d, v, path)
		case "limit":
			s.Limit, err = d.Int(v, path)
		case "classify":
			s.Classify, err = d.String(v, path)
		case "hop":
			s.Hop, err = d.Int(v, path)
		case "idle_timeout":
			s.IdleTimeout, err = d.Duration(v, path)
		}
		return err
	})
	if err != nil {
		return Spec{}, err
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// renamed reports the first key of mapping n that was renamed.
func renamed(d *strictyaml.Decoder, n *yaml.Node, path string, names map[string]string) error {
	if n.Kind != yaml.MappingNode {
		return nil // Mapping says what is wrong
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode {
			if now, ok := names[k.Value]; ok {
				return d.Errorf(k, strictyaml.Join(path, k.Value), "%q is now spelled %s (see docs/policy-language.md)", k.Value, now)
			}
		}
	}
	return nil
}

// shorthand decodes a scalar written where a mapping may be ("backoff:
// none"): its value is the kind.
func shorthand(d *strictyaml.Decoder, n *yaml.Node, path string) (kind string, pos Pos, ok bool) {
	if n.Kind != yaml.ScalarNode {
		return "", Pos{}, false
	}
	return n.Value, Pos{File: d.File, Line: n.Line, Path: path, Lines: map[string]int{"kind": n.Line}}, true
}

func decodeBackoff(d *strictyaml.Decoder, n *yaml.Node, path string) (*Backoff, error) {
	b := new(Backoff)
	if kind, pos, ok := shorthand(d, n, path); ok {
		b.Kind, b.Pos = kind, pos
		return b, nil
	}
	if err := renamed(d, n, path, renamedBackoff); err != nil {
		return nil, err
	}
	var err error
	b.Pos, err = d.Mapping(n, path, backoffFields, func(k string, v *yaml.Node, path string) error {
		var err error
		switch k {
		case "kind":
			b.Kind, err = d.String(v, path)
		case "base":
			b.Base, err = d.Duration(v, path)
		case "max":
			b.Max, err = d.Duration(v, path)
		case "multiplier":
			b.Multiplier, err = d.Float(v, path)
		case "jitter":
			b.Jitter, err = d.Float(v, path)
		}
		return err
	})
	return b, err
}

func decodeBudget(d *strictyaml.Decoder, n *yaml.Node, path string) (*Budget, error) {
	b := new(Budget)
	if kind, pos, ok := shorthand(d, n, path); ok {
		b.Kind, b.Pos = kind, pos
		return b, nil
	}
	if err := renamed(d, n, path, renamedBudget); err != nil {
		return nil, err
	}
	var err error
	b.Pos, err = d.Mapping(n, path, budgetFields, func(k string, v *yaml.Node, path string) error {
		var err error
		switch k {
		case "kind":
			b.Kind, err = d.String(v, path)
		case "max_tokens":
			b.MaxTokens, err = d.Float(v, path)
		case "token_ratio":
			b.TokenRatio, err = d.Float(v, path)
		case "percent":
			b.Percent, err = d.Float(v, path)
		case "ttl":
			b.TTL, err = d.Duration(v, path)
		case "min_retries_per_sec":
			b.MinRetriesPerSec, err = d.Int(v, path)
		case "capacity":
			b.Capacity, err = d.Int(v, path)
		case "retry_cost":
			b.RetryCost, err = d.Int(v, path)
		case "timeout_cost":
			b.TimeoutCost, err = d.Int(v, path)
		case "throttle_cost":
			b.ThrottleCost, err = d.Int(v, path)
		case "no_retry_increment":
			b.NoRetryIncrement, err = d.Int(v, path)
		case "k":
			b.K, err = d.Float(v, path)
		case "window":
			b.Window, err = d.Duration(v, path)
		}
		return err
	})
	return b, err
}

// decodeBreaker returns nil for "breaker: none".
func decodeBreaker(d *strictyaml.Decoder, n *yaml.Node, path string) (*Breaker, error) {
	if word, _, ok := shorthand(d, n, path); ok {
		switch word {
		case "none":
			return nil, nil
		case "default":
			return &Breaker{Pos: Pos{File: d.File, Line: n.Line, Path: path}}, nil
		}
		return nil, d.Errorf(n, path, "want none, default or a mapping of settings, got %q", word)
	}
	if err := renamed(d, n, path, renamedBreaker); err != nil {
		return nil, err
	}
	b := new(Breaker)
	var err error
	b.Pos, err = d.Mapping(n, path, breakerFields, func(k string, v *yaml.Node, path string) error {
		var err error
		switch k {
		case "consecutive_failures":
			b.ConsecutiveFailures, err = d.Int(v, path)
		case "open":
			b.Open, err = d.Duration(v, path)
		case "failure_rate":
			b.FailureRate, err = d.Float(v, path)
		case "window":
			b.Window, err = d.Duration(v, path)
		case "min_requests":
			b.MinRequests, err = d.Int(v, path)
		case "max_probes":
			b.MaxProbes, err = d.Int(v, path)
		case "success_threshold":
			b.SuccessThreshold, err = d.Int(v, path)
		}
		return err
	})
	return b, err
}
