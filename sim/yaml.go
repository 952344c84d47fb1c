package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
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
// value of a sweep is checked too.
func Parse(file string, data []byte) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "the file is empty"}
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: file, Line: extra.Line, Msg: "a scenario file holds one YAML document"}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(file, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	s := new(Scenario)
	d := decoder{file: file}
	if err := d.decode(root, reflect.ValueOf(s).Elem(), ""); err != nil {
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

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: m[2]}
	}
	return &Error{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// decoder decodes YAML nodes into scenario types strictly, recording where
// each spec and field came from.
type decoder struct {
	file  string
	nodes int // decoded so far, aliases expanded: bounded against alias bombs
}

// maxNodes bounds the nodes a scenario may decode to.
const maxNodes = 100_000

var (
	durationType = reflect.TypeFor[time.Duration]()
	rateType     = reflect.TypeFor[Rate]()
	distType     = reflect.TypeFor[Dist]()
	policyRef    = reflect.TypeFor[PolicyRef]()
	backoffPtr   = reflect.TypeFor[*BackoffSpec]()
	budgetPtr    = reflect.TypeFor[*BudgetSpec]()
	posType      = reflect.TypeFor[Pos]()
)

func (d *decoder) errf(n *yaml.Node, path, format string, args ...any) error {
	return &Error{File: d.file, Line: n.Line, Field: path, Msg: fmt.Sprintf(format, args...)}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if d.nodes++; d.nodes > maxNodes {
		return d.errf(n, path, "the scenario is too large (over %d values once aliases are expanded)", maxNodes)
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if isNull(n) {
		return nil // absent: the zero value, the documented default
	}
	t := v.Type()
	switch t {
	case durationType:
		if n.Kind != yaml.ScalarNode {
			return d.errf(n, path, "want a duration such as 200ms, got %s", kindName(n))
		}
		if n.Value == "0" {
			v.SetInt(0)
			return nil
		}
		x, err := time.ParseDuration(n.Value)
		if err != nil {
			return d.errf(n, path, "want a duration such as 200ms or 1m30s, got %q", n.Value)
		}
		v.SetInt(int64(x))
		return nil
	case rateType:
		if n.Kind != yaml.ScalarNode {
			return d.errf(n, path, "want a rate such as 140/min, got %s", kindName(n))
		}
		r, err := ParseRate(n.Value)
		if err != nil {
			return d.errf(n, path, "%v", err)
		}
		v.SetFloat(float64(r))
		return nil
	case distType:
		if n.Kind == yaml.ScalarNode {
			var x time.Duration
			if err := d.decode(n, reflect.ValueOf(&x).Elem(), path); err != nil {
				return d.errf(n, path, "want a duration (a constant) or a mapping such as {dist: exponential, mean: 1s}, got %q", n.Value)
			}
			v.Set(reflect.ValueOf(Dist{Kind: DistConstant, Mean: x, Pos: Pos{File: d.file, Line: n.Line, Path: path}}))
			return nil
		}
	case policyRef:
		switch {
		case n.Kind == yaml.ScalarNode && n.Value == "compared":
			return nil
		case n.Kind == yaml.ScalarNode && n.Value == "none":
			v.Set(reflect.ValueOf(PolicyRef{Spec: &PolicySpec{Name: "none", Attempts: 1, Budget: &BudgetSpec{Kind: BudgetNone}, Pos: Pos{File: d.file, Line: n.Line, Path: path}}}))
			return nil
		case n.Kind == yaml.MappingNode:
			ps := new(PolicySpec)
			if err := d.decode(n, reflect.ValueOf(ps).Elem(), path); err != nil {
				return err
			}
			v.Set(reflect.ValueOf(PolicyRef{Spec: ps}))
			return nil
		}
		return d.errf(n, path, "want compared, none or a policy mapping, got %s", kindName(n))
	case backoffPtr, budgetPtr:
		if n.Kind == yaml.ScalarNode { // "backoff: none", "budget: default"
			nv := reflect.New(t.Elem())
			nv.Elem().FieldByName("Kind").SetString(n.Value)
			nv.Elem().FieldByName("Pos").Set(reflect.ValueOf(Pos{File: d.file, Line: n.Line, Path: path, Lines: map[string]int{"kind": n.Line}}))
			v.Set(nv)
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Pointer:
		nv := reflect.New(t.Elem())
		if err := d.decode(n, nv.Elem(), path); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Struct:
		return d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errf(n, path, "want a list, got %s", kindName(n))
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := d.decode(item, s.Index(i), path+itemKey(item, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.errf(n, path, "want a %s, got %s", scalarKind(t), kindName(n))
	}
	return d.scalar(n, v, path)
}

func scalarKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float64:
		return "number"
	}
	return "whole number"
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) error {
	s := n.Value
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return d.errf(n, path, "want true or false, got %q", s)
		}
		v.SetBool(b)
	case reflect.Int:
		x, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil || x > math.MaxInt32 || x < math.MinInt32 {
			return d.errf(n, path, "want a whole number, got %q", s)
		}
		v.SetInt(x)
	case reflect.Uint64:
		x, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil {
			return d.errf(n, path, "want a non-negative whole number, got %q", s)
		}
		v.SetUint(x)
	case reflect.Float64:
		pct := strings.HasSuffix(s, "%")
		x, err := strconv.ParseFloat(strings.TrimSuffix(strings.ReplaceAll(s, "_", ""), "%"), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return d.errf(n, path, "want a number, got %q", s)
		}
		if pct {
			x /= 100
		}
		v.SetFloat(x)
	default:
		return d.errf(n, path, "cannot decode into %s", v.Type())
	}
	return nil
}

// itemKey names a list element in a path: by its name if it has one.
func itemKey(item *yaml.Node, i int) string {
	if item.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(item.Content); j += 2 {
			if k, val := item.Content[j], item.Content[j+1]; k.Value == "name" && val.Kind == yaml.ScalarNode && val.Value != "" {
				return "[" + val.Value + "]"
			}
		}
	}
	return "[" + strconv.Itoa(i) + "]"
}

func fieldKeys(t reflect.Type) (map[string]int, []string) {
	keys := map[string]int{}
	var names []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		keys[name] = i
		names = append(names, name)
	}
	return keys, names
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, path, "want a mapping, got %s", kindName(n))
	}
	t := v.Type()
	keys, names := fieldKeys(t)
	pos := Pos{File: d.file, Line: n.Line, Path: path, Lines: map[string]int{}}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, val := n.Content[j], n.Content[j+1]
		if k.Kind != yaml.ScalarNode {
			return d.errf(k, path, "want a field name, got %s", kindName(k))
		}
		sub := k.Value
		if path != "" {
			sub = path + "." + k.Value
		}
		i, ok := keys[k.Value]
		if !ok {
			known := slices.Clone(names)
			slices.Sort(known)
			return d.errf(k, sub, "unknown field (known fields here: %s)", strings.Join(known, ", "))
		}
		if _, dup := pos.Lines[k.Value]; dup {
			return d.errf(k, sub, "given twice")
		}
		pos.Lines[k.Value] = k.Line
		if err := d.decode(val, v.Field(i), sub); err != nil {
			return err
		}
	}
	if f := v.FieldByName("Pos"); f.IsValid() && f.Type() == posType {
		f.Set(reflect.ValueOf(pos))
	}
	return nil
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
		return &Error{File: file, Line: line, Field: "sweep.path", Msg: fmt.Sprintf(format, args...)}
	}
	f, err := field(reflect.ValueOf(c).Elem(), sw.Path)
	if err != nil {
		return nil, fail("%s: %v", sw.Path, err)
	}
	d := decoder{file: file}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: line}
	if err := d.decode(n, f, sw.Path); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Msg = "sweep value " + strconv.Quote(value) + ": " + e.Msg
		}
		return nil, err
	}
	c.Sweep = nil
	if err := c.Validate(); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Msg += " (with " + sw.Path + " = " + value + ")"
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
		keys, _ := fieldKeys(v.Type())
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
