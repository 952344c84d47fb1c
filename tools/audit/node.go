package audit

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Error is a problem in a file the audit reads — the mesh or a
// configuration an edge names — formatted "file:line: field: problem".
type Error = strictyaml.Error

// Source is where a value was read from: a file and a line, counting from 1.
// The zero Source is a value nobody wrote: a default.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// String returns "file:line", "file" when the line is not known, or
// "default" for the zero Source.
func (s Source) String() string {
	switch {
	case s.File == "":
		return "default"
	case s.Line <= 0:
		return s.File
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}

// maxFileSize bounds every file the audit reads: configuration files are
// small, and a larger one is a mistake, not a mesh.
const maxFileSize = 4 << 20

// maxNodes bounds the values a JSON document may hold.
const maxNodes = strictyaml.MaxNodes

// readFile reads a configuration file of at most maxFileSize bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, &Error{File: path, Err: fmt.Errorf("larger than %d MiB: not a configuration file", maxFileSize>>20)}
	}
	return data, nil
}

// doc reads the values of one foreign file — an Envoy, gRPC or Istio
// configuration — by path, as yaml nodes with their lines. Unlike the
// mesh file, it passes over fields it does not read: they belong to the
// other program's schema. What it reads, it checks, and it takes the
// spellings the other program takes (see names).
type doc struct {
	file  string
	nodes int
	names names
}

// names is how a foreign file's field names are matched.
type names int

const (
	// exactNames matches a field name as written (Kubernetes resources).
	exactNames names = iota
	// protoNames matches a protobuf field's name or its JSON name, as
	// Envoy's YAML loader does: retry_policy or retryPolicy. It also takes
	// a single mapping where a list is expected, as Envoy does.
	protoNames
	// foldedNames matches names whatever their case, as grpc-go's service
	// config parsing (encoding/json into untagged structs) does:
	// maxAttempts, MaxAttempts, maxattempts.
	foldedNames
)

// match says whether key, as written in the file, names the field want
// (written as the audit spells it: snake_case for Envoy, lowerCamelCase
// for gRPC).
func (d *doc) match(key, want string) bool {
	switch {
	case key == want:
		return true
	case d.names == protoNames:
		return key == lowerCamel(want)
	case d.names == foldedNames:
		return strings.EqualFold(key, want)
	}
	return false
}

// lowerCamel returns a protobuf field name's JSON name: retry_on → retryOn.
func lowerCamel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	up := false
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			up = false
		default:
			b.WriteRune(r)
			up = false
		}
	}
	return b.String()
}

func (d *doc) errorf(n *yaml.Node, path, format string, args ...any) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: d.file, Line: line, Field: path, Err: fmt.Errorf(format, args...)}
}

func (d *doc) at(n *yaml.Node) Source {
	if n == nil {
		return Source{File: d.file}
	}
	return Source{File: d.file, Line: n.Line}
}

// deref follows aliases, counting the values visited so that nested
// aliases cannot make reading take unbounded time.
func (d *doc) deref(n *yaml.Node, path string) (*yaml.Node, error) {
	for range 100 {
		if d.nodes++; d.nodes > maxNodes {
			return nil, d.errorf(n, path, "the file is too large (over %d values once aliases are expanded)", maxNodes)
		}
		if n == nil || n.Kind != yaml.AliasNode {
			return n, nil
		}
		n = n.Alias
	}
	return nil, d.errorf(n, path, "aliases nested too deep")
}

// mapping checks that n is a mapping.
func (d *doc) mapping(n *yaml.Node, path string) (*yaml.Node, error) {
	n, err := d.deref(n, path)
	if err != nil {
		return nil, err
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, d.errorf(n, path, "want a mapping, got %s", kindName(n))
	}
	return n, nil
}

// field returns the value of key in mapping m, or nil if it is absent or
// null; a key given twice is an error.
func (d *doc) field(m *yaml.Node, path, key string) (*yaml.Node, error) {
	var v *yaml.Node
	first := 0
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode || !d.match(k.Value, key) {
			continue
		}
		if first != 0 {
			return nil, d.errorf(k, strictyaml.Join(path, key), "given twice (first on line %d)", first)
		}
		first = max(k.Line, 1)
		v = m.Content[i+1]
	}
	v, err := d.deref(v, strictyaml.Join(path, key))
	if err != nil || strictyaml.IsNull(v) {
		return nil, err
	}
	return v, nil
}

// list returns the elements of list n.
func (d *doc) list(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n, err := d.deref(n, path)
	if err != nil {
		return nil, err
	}
	if n != nil && n.Kind == yaml.MappingNode && d.names == protoNames {
		return []*yaml.Node{n}, nil // Envoy takes one mapping for a list of one
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, d.errorf(n, path, "want a list, got %s", kindName(n))
	}
	out := make([]*yaml.Node, 0, len(n.Content))
	for i, item := range n.Content {
		item, err := d.deref(item, strictyaml.Index(path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}

func (d *doc) scalar(n *yaml.Node, path, want string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.errorf(n, path, "want %s, got %s", want, kindName(n))
	}
	return n.Value, nil
}

func (d *doc) str(n *yaml.Node, path string) (string, error) {
	return d.scalar(n, path, "a string")
}

// integer reads a whole number in [lo, hi]; a protobuf JSON integer may be
// written as a string ("3"), and is read the same.
func (d *doc) integer(n *yaml.Node, path string, lo, hi int) (int, error) {
	s, err := d.scalar(n, path, "a whole number")
	if err != nil {
		return 0, err
	}
	x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, d.errorf(n, path, "want a whole number, got %q", s)
	}
	if x < int64(lo) || x > int64(hi) {
		return 0, d.errorf(n, path, "%d is out of range: want %d to %d", x, lo, hi)
	}
	return int(x), nil
}

// number reads a finite number in [lo, hi].
func (d *doc) number(n *yaml.Node, path string, lo, hi float64) (float64, error) {
	s, err := d.scalar(n, path, "a number")
	if err != nil {
		return 0, err
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, d.errorf(n, path, "want a number, got %q", s)
	}
	if x < lo || x > hi {
		return 0, d.errorf(n, path, "%v is out of range: want %v to %v", x, lo, hi)
	}
	return x, nil
}

// maxDuration bounds every duration read: a day is far beyond any timeout
// or backoff a mesh means, and keeps every sum finite.
const maxDuration = 24 * time.Hour

// protoDuration reads a protobuf JSON Duration, seconds with up to nine
// decimals and the suffix s ("0.025s", "2s"), as Envoy and gRPC service
// configs write it; Envoy's YAML also takes {seconds, nanos}.
func (d *doc) protoDuration(n *yaml.Node, path string) (time.Duration, error) {
	if n.Kind == yaml.MappingNode {
		var total time.Duration
		for _, f := range []struct {
			key  string
			unit time.Duration
			hi   int
		}{{"seconds", time.Second, int(maxDuration / time.Second)}, {"nanos", 1, 999_999_999}} {
			v, err := d.field(n, path, f.key)
			if err != nil {
				return 0, err
			}
			if v != nil {
				x, err := d.integer(v, strictyaml.Join(path, f.key), 0, f.hi)
				if err != nil {
					return 0, err
				}
				total += time.Duration(x) * f.unit
			}
		}
		return min(total, maxDuration), nil
	}
	s, err := d.scalar(n, path, "a duration such as 0.25s")
	if err != nil {
		return 0, err
	}
	num, ok := strings.CutSuffix(s, "s")
	if !ok || num == "" || strings.ContainsAny(num, "eE+-_ ") || strings.HasSuffix(num, "m") || strings.HasSuffix(num, "n") || strings.HasSuffix(num, "µ") {
		return 0, d.errorf(n, path, "want a duration in seconds such as 0.25s or 2s, got %q", s)
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, d.errorf(n, path, "want a duration in seconds such as 0.25s or 2s, got %q", s)
	}
	if x > maxDuration.Seconds() {
		return 0, d.errorf(n, path, "%s is longer than %v", s, maxDuration)
	}
	return time.Duration(math.Round(x * 1e9)), nil
}

// goDuration reads a duration as Kubernetes resources write them: a Go
// duration ("500ms", "1m30s", "2s"), not negative.
func (d *doc) goDuration(n *yaml.Node, path string) (time.Duration, error) {
	s, err := d.scalar(n, path, "a duration such as 2s")
	if err != nil {
		return 0, err
	}
	x, err := time.ParseDuration(s)
	if err != nil {
		return 0, d.errorf(n, path, "want a duration such as 500ms or 2s, got %q", s)
	}
	if x < 0 || x > maxDuration {
		return 0, d.errorf(n, path, "%s is out of range: want 0 to %v", s, maxDuration)
	}
	return x, nil
}

func kindName(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	return strictyaml.KindName(n)
}
