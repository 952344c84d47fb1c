// Package strictyaml holds the one set of helpers recoil's YAML files are
// decoded with — scenarios (package sim), policy files (package
// policyspec, and through it package load) and gateway timelines (package
// gateway; and recoil audit's inputs and the proxy's configuration) — so
// that every file is read the same way and every problem is
// reported the same way, as "file:line: field: problem".
//
// Decoding is strict: a field that is not known, a field given twice, a
// value of the wrong type and a second YAML document are errors, each
// naming the line and the field's path. A null value (`field: ~`, or
// `field:` with nothing after it) is the field left out. Aliases are
// followed, and the values visited are counted against MaxNodes, so a
// file of nested aliases cannot make decoding take unbounded time.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxNodes bounds the values one Decoder visits, aliases expanded.
const MaxNodes = 100_000

// Error is a problem in a YAML file: the file, the line, the field's path
// and what is wrong. A zero Line means the line is not known.
type Error struct {
	// File is the file's name as given to the decoder.
	File string
	// Line is the offending field's line, counting from 1; 0 if unknown.
	Line int
	// Field is the offending field's path ("outages[1].duration",
	// "policies[p].backoff.kind"); empty when the problem is the file's.
	Field string
	// Err says what is wrong.
	Err error
}

// Error formats the error as "file:line: field: problem", leaving out
// what is not known.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Pos records where a mapping was read from, so that a check made after
// decoding can still name the line. It is zero for a value built in Go.
type Pos struct {
	// File is the file's name.
	File string
	// Line is the line of the mapping (of its first key).
	Line int
	// Path is the mapping's place in the file, such as "clients[broken]".
	Path string
	// Lines maps each key the mapping gave to its line.
	Lines map[string]int
}

// Errorf returns an *Error about field of the mapping at p: on the field's
// line if the mapping gave it, else on the mapping's.
func (p Pos) Errorf(field, format string, args ...any) *Error {
	line := p.Line
	if l, ok := p.Lines[field]; ok {
		line = l
	}
	return &Error{File: p.File, Line: line, Field: Join(p.Path, field), Err: fmt.Errorf(format, args...)}
}

// Checker keeps the first of the problems a validation finds. Its zero
// value is ready to use; it is not safe for concurrent use.
type Checker struct {
	// File names the file in errors whose Pos has none (values built in Go).
	File string
	err  *Error
}

// Errorf records a problem with field of the mapping at p, unless one was
// recorded already.
func (c *Checker) Errorf(p Pos, field, format string, args ...any) {
	if c.err == nil {
		c.Add(p.Errorf(field, format, args...))
	}
}

// Add records err, unless a problem was recorded already. An error that is
// not an *Error is recorded as the file's.
func (c *Checker) Add(err error) {
	if c.err != nil || err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Err: err}
	}
	if e.File == "" {
		e.File = c.File
	}
	c.err = e
}

// Err returns the first problem recorded, or nil.
func (c *Checker) Err() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

// Join appends a field's name to its parent's path.
func Join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// Index appends a list element's index to the list's path.
func Index(list string, i int) string { return list + "[" + strconv.Itoa(i) + "]" }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Read parses data as one YAML document and returns its root node, or nil
// for a document with nothing in it (an empty file, only comments, "---").
// A syntax error or a second document is an *Error naming file and line.
func Read(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: file, Line: extra.Line, Err: errors.New("a file holds one YAML document")}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(file, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	if IsNull(root) {
		return nil, nil
	}
	return root, nil
}

// syntaxError moves the line out of the YAML parser's message.
func syntaxError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Err: errors.New(m[2])}
	}
	return &Error{File: file, Err: errors.New(strings.TrimPrefix(msg, "yaml: "))}
}

// IsNull reports whether n is a null: a field left out.
func IsNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// KindName describes n for an error: "a mapping", "a list", or the
// scalar's value, quoted.
func KindName(n *yaml.Node) string {
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

// Lookup returns the value of key in mapping n (aliases followed), or nil
// if n is not a mapping or has no such key.
func Lookup(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

func deref(n *yaml.Node) *yaml.Node {
	for range 100 { // an alias of an alias: bounded, as the parser makes no cycles
		if n == nil || n.Kind != yaml.AliasNode {
			return n
		}
		n = n.Alias
	}
	return n
}

// Decoder decodes the nodes of one file. The zero value decodes a file
// with no name; set File. A Decoder is not safe for concurrent use.
type Decoder struct {
	// File names the file in errors.
	File  string
	nodes int
}

// Errorf returns an *Error about node n, at field path.
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: d.File, Line: line, Field: path, Err: fmt.Errorf(format, args...)}
}

// Visit follows n's aliases and counts it against MaxNodes. Mapping and
// List visit every value they pass on; call it on a root node.
func (d *Decoder) Visit(n *yaml.Node, path string) (*yaml.Node, error) {
	if d.nodes++; d.nodes > MaxNodes {
		return nil, d.Errorf(n, path, "the file is too large (over %d values once aliases are expanded)", MaxNodes)
	}
	return deref(n), nil
}

// Mapping decodes mapping n at path: for each key in known, in the order
// the file gives them, f is called with the key, its value (aliases
// followed) and the value's path; a null value is skipped, as a field left
// out. A key not in known, a key given twice and a node that is not a
// mapping are errors. A null n is an empty mapping. Mapping returns where
// each key was, for checks made later.
func (d *Decoder) Mapping(n *yaml.Node, path string, known []string, f func(key string, v *yaml.Node, path string) error) (Pos, error) {
	pos := Pos{File: d.File, Path: path, Lines: map[string]int{}}
	if IsNull(n) {
		return pos, nil
	}
	n = deref(n)
	pos.Line = n.Line
	if n.Kind != yaml.MappingNode {
		return pos, d.Errorf(n, path, "want a mapping, got %s", KindName(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return pos, d.Errorf(k, path, "want a field name, got %s", KindName(k))
		}
		sub := Join(path, k.Value)
		if line, dup := pos.Lines[k.Value]; dup {
			return pos, d.Errorf(k, sub, "given twice (first on line %d)", line)
		}
		if !slices.Contains(known, k.Value) {
			names := slices.Clone(known)
			slices.Sort(names)
			return pos, d.Errorf(k, sub, "unknown field %q (want one of %s)", k.Value, strings.Join(names, ", "))
		}
		pos.Lines[k.Value] = k.Line
		v, err := d.Visit(n.Content[i+1], sub)
		if err != nil {
			return pos, err
		}
		if IsNull(v) {
			continue
		}
		if err := f(k.Value, v, sub); err != nil {
			return pos, err
		}
	}
	return pos, nil
}

// List decodes list n at path, calling f for each element (aliases
// followed) with its index. A null n is an empty list.
func (d *Decoder) List(n *yaml.Node, path string, f func(i int, item *yaml.Node) error) error {
	if IsNull(n) {
		return nil
	}
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		return d.Errorf(n, path, "want a list, got %s", KindName(n))
	}
	for i, item := range n.Content {
		item, err := d.Visit(item, Index(path, i))
		if err != nil {
			return err
		}
		if err := f(i, item); err != nil {
			return err
		}
	}
	return nil
}

// FieldKeys maps the yaml tags of struct type t's fields to the fields'
// indexes, and lists the tags in field order. Fields without a tag, or
// tagged "-", are left out.
func FieldKeys(t reflect.Type) (map[string]int, []string) {
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

// Struct decodes mapping n into the struct v by its fields' yaml tags,
// calling value for each field the mapping gives (see Mapping for what is
// an error). also names keys that are known but have no field, because the
// caller reads them itself; they are passed over.
func (d *Decoder) Struct(n *yaml.Node, path string, v reflect.Value, value func(n *yaml.Node, path string, field reflect.Value) error, also ...string) (Pos, error) {
	keys, names := FieldKeys(v.Type())
	return d.Mapping(n, path, append(names, also...), func(k string, val *yaml.Node, sub string) error {
		i, ok := keys[k]
		if !ok {
			return nil // one of also
		}
		return value(val, sub, v.Field(i))
	})
}

var durationType = reflect.TypeFor[time.Duration]()

// Scalar decodes n into v by v's type: a time.Duration (Duration), or a
// string, bool, int, uint64 or float64 kind.
func (d *Decoder) Scalar(n *yaml.Node, path string, v reflect.Value) error {
	var x any
	var err error
	switch {
	case v.Type() == durationType:
		x, err = d.Duration(n, path)
	case v.Kind() == reflect.String:
		x, err = d.String(n, path)
	case v.Kind() == reflect.Bool:
		x, err = d.Bool(n, path)
	case v.Kind() == reflect.Int:
		x, err = d.Int(n, path)
	case v.Kind() == reflect.Uint64:
		x, err = d.Uint64(n, path)
	case v.Kind() == reflect.Float64:
		x, err = d.Float(n, path)
	default:
		return d.Errorf(n, path, "cannot decode into %s", v.Type())
	}
	if err == nil {
		v.Set(reflect.ValueOf(x).Convert(v.Type()))
	}
	return err
}

// scalar decodes n's value with parse, or says what was wanted instead:
// want names the kind of value for a node that is not a scalar, example
// shows one for a scalar that does not parse.
func scalar[T any](d *Decoder, n *yaml.Node, path, want, example string, parse func(string) (T, bool)) (T, error) {
	var zero T
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return zero, d.Errorf(n, path, "want %s, got %s", want, KindName(n))
	}
	x, ok := parse(n.Value)
	if !ok {
		return zero, d.Errorf(n, path, "want %s, got %q", example, n.Value)
	}
	return x, nil
}

// String decodes a string.
func (d *Decoder) String(n *yaml.Node, path string) (string, error) {
	return scalar(d, n, path, "a string", "", func(s string) (string, bool) { return s, true })
}

// Duration decodes a Go duration ("200ms", "1m30s"); "0" is zero. A
// negative duration is returned as such, for the caller's check to name.
func (d *Decoder) Duration(n *yaml.Node, path string) (time.Duration, error) {
	return scalar(d, n, path, "a duration such as 200ms", "a duration such as 200ms or 1m30s", func(s string) (time.Duration, bool) {
		x, err := time.ParseDuration(s)
		return x, err == nil
	})
}

// Int decodes a whole number that fits in 32 bits; underscores may group
// digits ("100_000").
func (d *Decoder) Int(n *yaml.Node, path string) (int, error) {
	return scalar(d, n, path, "a whole number", "a whole number", func(s string) (int, bool) {
		x, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 32)
		return int(x), err == nil
	})
}

// Uint64 decodes a non-negative whole number; underscores may group
// digits.
func (d *Decoder) Uint64(n *yaml.Node, path string) (uint64, error) {
	return scalar(d, n, path, "a non-negative whole number", "a non-negative whole number", func(s string) (uint64, bool) {
		x, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
		return x, err == nil
	})
}

// Float decodes a finite number; underscores may group digits, and a
// trailing % divides by 100 ("5%" is 0.05).
func (d *Decoder) Float(n *yaml.Node, path string) (float64, error) {
	return scalar(d, n, path, "a number", "a number", func(s string) (float64, bool) {
		num, pct := strings.CutSuffix(strings.ReplaceAll(s, "_", ""), "%")
		x, err := strconv.ParseFloat(num, 64)
		if pct {
			x /= 100
		}
		return x, err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
	})
}

// Bool decodes true or false.
func (d *Decoder) Bool(n *yaml.Node, path string) (bool, error) {
	return scalar(d, n, path, "true or false", "true or false", func(s string) (bool, bool) {
		b, err := strconv.ParseBool(s)
		return b, err == nil
	})
}
