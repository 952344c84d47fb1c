package sim

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Load reads a scenario file. Problems come back as an *Error naming the
// file, the line and the field.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a scenario from YAML; file names it in errors. Decoding is
// strict: an unknown field, a value of the wrong type, a second document or
// a value out of range is an *Error naming the file, line and field. Each
// value of a sweep is checked too. Policies are written in the policy
// language (package policyspec).
func Parse(file string, data []byte) (*Scenario, error) {
	root, err := strictyaml.Read(file, data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, &Error{File: file, Err: errors.New("the file is empty")}
	}
	s := new(Scenario)
	d := decoder{Decoder: strictyaml.Decoder{File: file}}
	if root, err = d.Visit(root, ""); err != nil {
		return nil, err
	}
	if err := d.decode(root, "", reflect.ValueOf(s).Elem()); err != nil {
		return nil, err
	}
	s.Description = strings.TrimSpace(s.Description)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Sweep != nil {
		for _, x := range s.Sweep.points() {
			if _, err := s.at(x); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// decoder decodes YAML nodes into scenario types strictly, by their yaml
// tags, recording where each spec and field came from. Policies are the
// policy language's to decode.
type decoder struct {
	strictyaml.Decoder
}

var (
	rateType  = reflect.TypeFor[Rate]()
	distType  = reflect.TypeFor[Dist]()
	policyRef = reflect.TypeFor[PolicyRef]()
	specType  = reflect.TypeFor[PolicySpec]()
	posType   = reflect.TypeFor[Pos]()
)

// decode decodes n, whose aliases are followed and which is not null,
// into v.
func (d *decoder) decode(n *yaml.Node, path string, v reflect.Value) error {
	t := v.Type()
	switch t {
	case rateType:
		if n.Kind != yaml.ScalarNode {
			return d.Errorf(n, path, "want a rate such as 140/min, got %s", strictyaml.KindName(n))
		}
		r, err := ParseRate(n.Value)
		if err != nil {
			return d.Errorf(n, path, "%v", err)
		}
		v.SetFloat(float64(r))
		return nil
	case distType:
		if n.Kind == yaml.ScalarNode {
			x, err := d.Duration(n, path)
			if err != nil {
				return d.Errorf(n, path, "want a duration (a constant) or a mapping such as {dist: exponential, mean: 1s}, got %q", n.Value)
			}
			v.Set(reflect.ValueOf(Dist{Kind: DistConstant, Mean: x, Pos: Pos{File: d.File, Line: n.Line, Path: path}}))
			return nil
		}
	case specType:
		ps, err := policyspec.Decode(d.File, n, path)
		v.Set(reflect.ValueOf(ps))
		return err
	case policyRef:
		switch {
		case n.Kind == yaml.ScalarNode && n.Value == "compared":
			return nil
		case n.Kind == yaml.ScalarNode && n.Value == "none":
			v.Set(reflect.ValueOf(PolicyRef{Spec: &PolicySpec{Name: "none", MaxAttempts: 1,
				Budget: &policyspec.Budget{Kind: policyspec.BudgetNone}, Pos: Pos{File: d.File, Line: n.Line, Path: path}}}))
			return nil
		case n.Kind == yaml.MappingNode:
			ps, err := policyspec.Decode(d.File, n, path)
			v.Set(reflect.ValueOf(PolicyRef{Spec: &ps}))
			return err
		}
		return d.Errorf(n, path, "want compared, none or a policy mapping, got %s", strictyaml.KindName(n))
	}
	switch t.Kind() {
	case reflect.Pointer:
		nv := reflect.New(t.Elem())
		if err := d.decode(n, path, nv.Elem()); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Struct:
		return d.decodeStruct(n, path, v)
	case reflect.Slice:
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		err := d.List(n, path, func(i int, item *yaml.Node) error {
			if strictyaml.IsNull(item) {
				return nil
			}
			return d.decode(item, path+itemKey(item, i), s.Index(i))
		})
		v.Set(s)
		return err
	}
	return d.Scalar(n, path, v)
}

// itemKey names a list element in a path: by its name if it has one.
func itemKey(item *yaml.Node, i int) string {
	if name := strictyaml.Lookup(item, "name"); name != nil && name.Kind == yaml.ScalarNode && name.Value != "" {
		return "[" + name.Value + "]"
	}
	return "[" + strconv.Itoa(i) + "]"
}

func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) error {
	pos, err := d.Struct(n, path, v, d.decode)
	if f := v.FieldByName("Pos"); f.IsValid() && f.Type() == posType {
		f.Set(reflect.ValueOf(pos))
	}
	return err
}

// at returns a copy of the scenario with the sweep's field set to value,
// checked.
func (s *Scenario) at(value string) (*Scenario, error) {
	c := clone(s)
	sw := s.Sweep
	line := sw.Pos.Line
	if l, ok := sw.Pos.Lines["values"]; ok {
		line = l
	}
	file := sw.Pos.File
	if file == "" {
		file = s.Pos.File
	}
	fail := func(format string, args ...any) error {
		return &Error{File: file, Line: line, Field: "sweep.path", Err: fmt.Errorf(format, args...)}
	}
	f, err := field(reflect.ValueOf(c).Elem(), sw.Path)
	if err != nil {
		return nil, fail("%s: %v", sw.Path, err)
	}
	d := decoder{Decoder: strictyaml.Decoder{File: file}}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: line}
	if err := d.decode(n, sw.Path, f); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Err = fmt.Errorf("sweep value %q: %w", value, e.Err)
		}
		return nil, err
	}
	c.Sweep = nil
	if err := c.Validate(); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Err = fmt.Errorf("%w (with %s = %s)", e.Err, sw.Path, value)
			if e.Field == sw.Path {
				e.File, e.Line = file, line // the value came from the sweep
			}
		}
		return nil, err
	}
	return c, nil
}

var segment = regexp.MustCompile(`^([a-z_]+)(?:\[([^\]]+)\])?$`)

// field finds the field a sweep path names.
func field(v reflect.Value, path string) (reflect.Value, error) {
	for part := range strings.SplitSeq(path, ".") {
		m := segment.FindStringSubmatch(part)
		if m == nil {
			return reflect.Value{}, fmt.Errorf("cannot read %q: want key or key[name]", part)
		}
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if v.Type() == policyRef {
			if v.Field(0).IsNil() {
				return reflect.Value{}, fmt.Errorf("%q is the compared policy; sweep a field of a policy written out", part)
			}
			v = v.Field(0).Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("%q: not a mapping", part)
		}
		keys, _ := strictyaml.FieldKeys(v.Type())
		i, ok := keys[m[1]]
		if !ok {
			return reflect.Value{}, fmt.Errorf("no field %q", m[1])
		}
		v = v.Field(i)
		if m[2] == "" {
			continue
		}
		if v.Kind() != reflect.Slice {
			return reflect.Value{}, fmt.Errorf("%q is not a list", m[1])
		}
		found := false
		for j := range v.Len() {
			if e := v.Index(j); e.Kind() == reflect.Struct && e.FieldByName("Name").IsValid() && e.FieldByName("Name").String() == m[2] {
				v, found = e, true
				break
			}
		}
		if !found {
			j, err := strconv.Atoi(m[2])
			if err != nil || j < 0 || j >= v.Len() {
				return reflect.Value{}, fmt.Errorf("%s has no element %q", m[1], m[2])
			}
			v = v.Index(j)
		}
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Slice:
		if v.Type() != distType {
			return reflect.Value{}, errors.New("names a mapping or a list, not a value")
		}
	}
	return v, nil
}

// clone deep-copies a scenario, so a sweep point can change it.
func clone(s *Scenario) *Scenario {
	c := new(Scenario)
	deepCopy(reflect.ValueOf(c).Elem(), reflect.ValueOf(s).Elem())
	return c
}

func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		nv := reflect.New(src.Type().Elem())
		deepCopy(nv.Elem(), src.Elem())
		dst.Set(nv)
	case reflect.Struct:
		if src.Type() == posType {
			dst.Set(src) // read-only once decoded
			return
		}
		for i := range src.NumField() {
			deepCopy(dst.Field(i), src.Field(i))
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	default:
		dst.Set(src)
	}
}
