package policyspec

import (
	"os"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
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
	s.Pos, err = d.Struct(n, path, reflect.ValueOf(&s).Elem(), func(n *yaml.Node, path string, f reflect.Value) error {
		var err error
		switch p := f.Addr().Interface().(type) {
		case **Backoff:
			*p, err = decodeMapping[Backoff](d, n, path, renamedBackoff)
		case **Budget:
			*p, err = decodeMapping[Budget](d, n, path, renamedBudget)
		case **Breaker:
			*p, err = decodeBreaker(d, n, path)
		case **Limiter:
			*p, err = decodeMapping[Limiter](d, n, path, nil)
		case **Fallback:
			*p, err = decodeFallback(d, n, path)
		case **Hedge:
			h := new(Hedge)
			h.Pos, err = d.Struct(n, path, reflect.ValueOf(h).Elem(), d.Scalar)
			*p = h
		default:
			err = d.Scalar(n, path, f)
		}
		return err
	}, "preset")
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
	if n == nil || n.Kind != yaml.MappingNode {
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

// decodeMapping decodes mapping n into a new T (a Backoff, a Budget or a
// Breaker) by its yaml tags, once no key is one renamed; a scalar is
// shorthand for {kind: scalar} ("backoff: none").
func decodeMapping[T any](d *strictyaml.Decoder, n *yaml.Node, path string, renames map[string]string) (*T, error) {
	t := new(T)
	v := reflect.ValueOf(t).Elem()
	pos := Pos{File: d.File, Line: n.Line, Path: path, Lines: map[string]int{"kind": n.Line}}
	var err error
	if n.Kind == yaml.ScalarNode {
		v.FieldByName("Kind").SetString(n.Value)
	} else if err = renamed(d, n, path, renames); err == nil {
		pos, err = d.Struct(n, path, v, d.Scalar)
	}
	v.FieldByName("Pos").Set(reflect.ValueOf(pos))
	return t, err
}

// decodeBreaker returns nil for "breaker: none".
func decodeBreaker(d *strictyaml.Decoder, n *yaml.Node, path string) (*Breaker, error) {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "none":
			return nil, nil
		case "default":
			return &Breaker{Pos: Pos{File: d.File, Line: n.Line, Path: path}}, nil
		}
		return nil, d.Errorf(n, path, "want none, default or a mapping of settings, got %q", n.Value)
	}
	return decodeMapping[Breaker](d, n, path, renamedBreaker)
}
