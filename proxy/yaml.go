package proxy

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/recoil-go/recoil/tools/policyspec"
	"go.yaml.in/yaml/v3"
)

// maxConfig bounds a configuration file: a proxy's routes and clients fit
// in far less, and a file of nested aliases cannot grow past it either.
const maxConfig = 4 << 20

// Load reads and parses the configuration file at path (see Parse).
func Load(path string) (Config, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Config{}, err
	}
	if fi.Size() > maxConfig {
		return Config{}, &policyspec.Error{File: path, Err: fmt.Errorf("%d bytes: a configuration is at most %d", fi.Size(), maxConfig)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return Parse(path, data)
}

// Parse reads a configuration in YAML, file naming it in errors. Policies
// are written in the policy language (docs/policy-language.md). Decoding
// is strict: an unknown field, a field given twice, a value of the wrong
// type, a second document — each is an *policyspec.Error naming the file,
// the line and the field, as is every check Parse makes after decoding
// (credentials named but absent, a public address with no clients). An
// empty file is the zero Config.
func Parse(file string, data []byte) (Config, error) {
	c := Config{File: file}
	if len(data) > maxConfig {
		return c, &policyspec.Error{File: file, Err: fmt.Errorf("%d bytes: a configuration is at most %d", len(data), maxConfig)}
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, errEOF):
		return c, nil
	case err != nil:
		return c, yamlErr(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return c, &policyspec.Error{File: file, Line: extra.Line, Err: errors.New("a second YAML document: a configuration is one")}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if isNull(root) {
		return c, nil
	}
	d := decoder{file: file}
	pos, err := d.mapping(root, "", &c, map[string]func(*yaml.Node) error{
		"policies": func(n *yaml.Node) error { return d.policies(n, &c) },
	})
	c.pos = pos
	return c, err
}

var errEOF = func() error {
	var n yaml.Node
	return yaml.NewDecoder(strings.NewReader("")).Decode(&n)
}()

// decoder decodes the configuration's mappings strictly.
type decoder struct{ file string }

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) error {
	return &policyspec.Error{File: d.file, Line: n.Line, Field: field, Err: fmt.Errorf(format, args...)}
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// mapping decodes the mapping n at path into the struct out points to:
// each key a field by its yaml tag, or one of special's. It returns the
// mapping's position.
func (d *decoder) mapping(n *yaml.Node, path string, out any, special map[string]func(*yaml.Node) error) (policyspec.Pos, error) {
	pos := policyspec.Pos{File: d.file, Line: n.Line, Path: path, Lines: map[string]int{}}
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return pos, d.errorf(n, path, "want a mapping, found %s", kindName(n))
	}
	v := reflect.ValueOf(out).Elem()
	fields := map[string]int{}
	var names []string
	for i := 0; i < v.NumField(); i++ {
		tag := v.Type().Field(i).Tag.Get("yaml")
		if tag != "" && tag != "-" {
			fields[tag] = i
			names = append(names, tag)
		}
	}
	for k := range special {
		names = append(names, k)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		key := kn.Value
		field := join(path, key)
		if _, dup := pos.Lines[key]; dup {
			return pos, d.errorf(kn, field, "given twice")
		}
		pos.Lines[key] = kn.Line
		if isNull(vn) {
			continue
		}
		if f, ok := special[key]; ok {
			if err := f(vn); err != nil {
				return pos, err
			}
			continue
		}
		idx, ok := fields[key]
		if !ok {
			return pos, d.errorf(kn, field, "unknown field (known: %s)", strings.Join(names, ", "))
		}
		if err := d.value(vn, field, v.Field(idx)); err != nil {
			return pos, err
		}
	}
	return pos, nil
}

// value decodes vn into f: the proxy's own structs and lists of them
// strictly, scalars and lists of scalars by yaml.
func (d *decoder) value(vn *yaml.Node, field string, f reflect.Value) error {
	switch p := f.Addr().Interface().(type) {
	case *[]Route:
		return d.list(vn, field, func(i int, n *yaml.Node) error {
			var r Route
			err := d.route(n, fmt.Sprintf("%s[%d]", field, i), &r)
			*p = append(*p, r)
			return err
		})
	case *[]Client:
		return d.list(vn, field, func(i int, n *yaml.Node) error {
			var c Client
			pos, err := d.mapping(n, fmt.Sprintf("%s[%d]", field, i), &c, nil)
			c.pos = pos
			*p = append(*p, c)
			return err
		})
	case **Fleet:
		*p = new(Fleet)
		pos, err := d.mapping(vn, field, *p, nil)
		(*p).pos = pos
		return err
	case **Allowance:
		*p = new(Allowance)
		_, err := d.mapping(vn, field, *p, nil)
		return err
	}
	if err := vn.Decode(f.Addr().Interface()); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			return d.errorf(vn, field, "%s", trimLine(te.Errors[0]))
		}
		return d.errorf(vn, field, "%v", err)
	}
	return nil
}

func (d *decoder) list(n *yaml.Node, field string, each func(int, *yaml.Node) error) error {
	if n.Kind != yaml.SequenceNode {
		return d.errorf(n, field, "want a list, found %s", kindName(n))
	}
	for i, e := range n.Content {
		if err := each(i, e); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) route(n *yaml.Node, path string, r *Route) error {
	pos, err := d.mapping(n, path, r, map[string]func(*yaml.Node) error{
		"policy": func(v *yaml.Node) error {
			if v.Kind == yaml.ScalarNode {
				r.PolicyName = v.Value
				return nil
			}
			s, err := policyspec.Decode(d.file, v, join(path, "policy"))
			r.Policy = &s
			return err
		},
		"targets": func(v *yaml.Node) error {
			return d.list(v, join(path, "targets"), func(i int, tn *yaml.Node) error {
				var t Target
				tp := fmt.Sprintf("%s.targets[%d]", path, i)
				pos, err := d.mapping(tn, tp, &t, map[string]func(*yaml.Node) error{
					"breaker": func(b *yaml.Node) error {
						br, err := d.breaker(b, join(tp, "breaker"))
						t.Breaker = br
						return err
					},
				})
				t.pos = pos
				r.Targets = append(r.Targets, t)
				return err
			})
		},
	})
	r.pos = pos
	return err
}

// breaker decodes a breaker mapping in the policy language, as the one
// field of a policy.
func (d *decoder) breaker(n *yaml.Node, path string) (*policyspec.Breaker, error) {
	wrap := &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "breaker", Line: n.Line}, n,
	}}
	s, err := policyspec.Decode(d.file, wrap, strings.TrimSuffix(path, ".breaker"))
	return s.Breaker, err
}

func (d *decoder) policies(n *yaml.Node, c *Config) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, "policies", "want a mapping of names to policies, found %s", kindName(n))
	}
	c.Policies = map[string]policyspec.Spec{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		if _, dup := c.Policies[name]; dup {
			return d.errorf(n.Content[i], "policies["+name+"]", "given twice")
		}
		s, err := policyspec.Decode(d.file, n.Content[i+1], "policies["+name+"]")
		if err != nil {
			return err
		}
		if s.Name == "" {
			s.Name = name
		}
		c.Policies[name] = s
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}

// trimLine drops yaml's own "line N: " from a message: the error names
// the line already.
func trimLine(s string) string {
	if strings.HasPrefix(s, "line ") {
		if i := strings.Index(s, ": "); i > 0 {
			return s[i+2:]
		}
	}
	return s
}

func yamlErr(file string, err error) error {
	msg := err.Error()
	line := 0
	msg = strings.TrimPrefix(msg, "yaml: ")
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
		msg = trimLine(msg)
	}
	return &policyspec.Error{File: file, Line: line, Err: errors.New(msg)}
}
