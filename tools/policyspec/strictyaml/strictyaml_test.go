package strictyaml

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestRead(t *testing.T) {
	tests := []struct {
		name, in string
		wantNil  bool
		wantErr  string // "" for none
	}{
		{"empty", "", true, ""},
		{"comments only", "# nothing\n", true, ""},
		{"document marker", "---\n", true, ""},
		{"null", "~\n", true, ""},
		{"a mapping", "a: 1\n", false, ""},
		{"two documents", "a: 1\n---\nb: 2\n", false, "f.yaml:2: a file holds one YAML document"},
		{"syntax error", "a: 1\n b: 2\n", false, "f.yaml:2: mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Read("f.yaml", []byte(tt.in))
			if tt.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || err.Error() != tt.wantErr {
					t.Fatalf("Read = %v, want *Error %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || (n == nil) != tt.wantNil {
				t.Fatalf("Read = %v, %v; want nil node %v, no error", n, err, tt.wantNil)
			}
		})
	}
}

func root(t *testing.T, src string) *yaml.Node {
	t.Helper()
	n, err := Read("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMapping(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    string // the keys seen, in order, with values
		wantErr string
	}{
		{"in the file's order", "b: 2\na: 1\n", "b=2 a=1", ""},
		{"null is left out", "a: ~\nb:\n", "", ""},
		{"alias followed", "a: &x 5\nb: *x\n", "a=5 b=5", ""},
		{"unknown field", "a: 1\nc: 3\n", "", `f.yaml:2: top.c: unknown field "c" (want one of a, b)`},
		{"given twice", "a: 1\nb: 2\na: 3\n", "", "f.yaml:3: top.a: given twice (first on line 1)"},
		{"not a mapping", "[1, 2]\n", "", "f.yaml:1: top: want a mapping, got a list"},
		{"a key that is not a name", "? [a]\n: 1\n", "", "f.yaml:1: top: want a field name, got a list"},
		{"the callback's error", "a: x\n", "", `f.yaml:1: top.a: want a whole number, got "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Decoder{File: "f.yaml"}
			var seen []string
			pos, err := d.Mapping(root(t, tt.src), "top", []string{"a", "b"}, func(k string, v *yaml.Node, path string) error {
				x, err := d.Int(v, path)
				seen = append(seen, k+"="+itoa(x))
				return err
			})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Mapping = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(seen, " "); got != tt.want {
				t.Errorf("Mapping saw %q, want %q", got, tt.want)
			}
			if pos.File != "f.yaml" || pos.Path != "top" || pos.Line != 1 {
				t.Errorf("Mapping pos = %+v, want f.yaml, top, line 1", pos)
			}
		})
	}
}

func itoa(i int) string {
	b, _ := yaml.Marshal(i)
	return strings.TrimSpace(string(b))
}

func TestMappingNull(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	pos, err := d.Mapping(nil, "x", nil, func(string, *yaml.Node, string) error {
		t.Error("called for a null mapping")
		return nil
	})
	if err != nil || pos.Path != "x" {
		t.Errorf("Mapping(nil) = %+v, %v; want an empty mapping at x", pos, err)
	}
}

func TestList(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	var got []int
	err := d.List(root(t, "[3, 4]\n"), "xs", func(i int, item *yaml.Node) error {
		x, err := d.Int(item, Index("xs", i))
		got = append(got, x)
		return err
	})
	if err != nil || len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Errorf("List = %v, %v; want [3 4]", got, err)
	}
	err = d.List(root(t, "a: 1\n"), "xs", nil)
	if err == nil || err.Error() != "f.yaml:1: xs: want a list, got a mapping" {
		t.Errorf("List(mapping) = %v", err)
	}
	if err := d.List(nil, "xs", nil); err != nil {
		t.Errorf("List(nil) = %v, want an empty list", err)
	}
}

// TestScalars: every scalar is decoded the same way in every file.
func TestScalars(t *testing.T) {
	tests := []struct {
		kind, in string
		want     any
		wantErr  string
	}{
		{"duration", "200ms", 200 * time.Millisecond, ""},
		{"duration", "0", time.Duration(0), ""},
		{"duration", "-1s", -time.Second, ""},
		{"duration", "60", nil, `want a duration such as 200ms or 1m30s, got "60"`},
		{"duration", "[1s]", nil, "want a duration such as 200ms, got a list"},
		{"int", "100_000", 100000, ""},
		{"int", "-3", -3, ""},
		{"int", "2.5", nil, `want a whole number, got "2.5"`},
		{"int", "9999999999", nil, `want a whole number, got "9999999999"`},
		{"uint64", "18446744073709551615", uint64(18446744073709551615), ""},
		{"uint64", "-1", nil, `want a non-negative whole number, got "-1"`},
		{"float", "0.25", 0.25, ""},
		{"float", "5%", 0.05, ""},
		{"float", "1_000.5", 1000.5, ""},
		{"float", ".nan", nil, `want a number, got ".nan"`},
		{"float", "Inf", nil, `want a number, got "Inf"`},
		{"float", "often", nil, `want a number, got "often"`},
		{"bool", "true", true, ""},
		{"bool", "perhaps", nil, `want true or false, got "perhaps"`},
		{"string", "x", "x", ""},
		{"string", "{a: 1}", nil, "want a string, got a mapping"},
	}
	for _, tt := range tests {
		d := &Decoder{File: "f.yaml"}
		n := root(t, "v: "+tt.in+"\n").Content[1]
		var got any
		var err error
		switch tt.kind {
		case "duration":
			got, err = d.Duration(n, "v")
		case "int":
			got, err = d.Int(n, "v")
		case "uint64":
			got, err = d.Uint64(n, "v")
		case "float":
			got, err = d.Float(n, "v")
		case "bool":
			got, err = d.Bool(n, "v")
		case "string":
			got, err = d.String(n, "v")
		}
		if tt.wantErr != "" {
			if want := "f.yaml:1: v: " + tt.wantErr; err == nil || err.Error() != want {
				t.Errorf("%s(%s) = %v, %v; want error %q", tt.kind, tt.in, got, err, want)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s(%s) = %v, %v; want %v", tt.kind, tt.in, got, err, tt.want)
		}
	}
}

// TestVisitBound: a file of nested aliases cannot make decoding visit
// more than MaxNodes values.
func TestVisitBound(t *testing.T) {
	src := "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g"} {
		src += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	src += "top: *g\n"
	d := &Decoder{File: "bomb.yaml"}
	var walk func(n *yaml.Node, path string) error
	walk = func(n *yaml.Node, path string) error {
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		return d.List(n, path, func(i int, item *yaml.Node) error { return walk(item, Index(path, i)) })
	}
	err := walk(Lookup(root(t, src), "top"), "top")
	if err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("walking 10^7 aliased values: %v, want a too-large error", err)
	}
}

func TestPosAndChecker(t *testing.T) {
	p := Pos{File: "f.yaml", Line: 3, Path: "policies[p]", Lines: map[string]int{"base": 5}}
	if got, want := p.Errorf("base", "must be %s", "positive").Error(), "f.yaml:5: policies[p].base: must be positive"; got != want {
		t.Errorf("Errorf(base) = %q, want %q", got, want)
	}
	if got, want := p.Errorf("max", "no").Error(), "f.yaml:3: policies[p].max: no"; got != want {
		t.Errorf("Errorf(max) = %q, want %q (the mapping's line)", got, want)
	}
	c := Checker{File: "scenario.yaml"}
	if c.Err() != nil {
		t.Error("a new Checker has an error")
	}
	c.Errorf(Pos{}, "max_attempts", "first")
	c.Errorf(p, "base", "second")
	c.Add(errors.New("third"))
	if got, want := c.Err().Error(), "scenario.yaml: max_attempts: first"; got != want {
		t.Errorf("Checker kept %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(c.Err(), &e) || errors.Unwrap(e).Error() != "first" {
		t.Errorf("Checker's error %v does not unwrap to its problem", c.Err())
	}
}

func TestLookup(t *testing.T) {
	n := root(t, "name: x\nother: &o {name: y}\nref: *o\n")
	if v := Lookup(n, "name"); v == nil || v.Value != "x" {
		t.Errorf("Lookup(name) = %v", v)
	}
	if v := Lookup(Lookup(n, "ref"), "name"); v == nil || v.Value != "y" {
		t.Errorf("Lookup through an alias = %v", v)
	}
	if v := Lookup(n, "missing"); v != nil {
		t.Errorf("Lookup(missing) = %v, want nil", v)
	}
	if v := Lookup(Lookup(n, "name"), "x"); v != nil {
		t.Errorf("Lookup in a scalar = %v, want nil", v)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "f", Line: 2, Field: "a.b", Err: errors.New("bad")}, "f:2: a.b: bad"},
		{Error{File: "f", Err: errors.New("bad")}, "f: bad"},
		{Error{Field: "a", Err: errors.New("bad")}, "a: bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestStruct: a struct is decoded by its fields' yaml tags, each scalar
// by its type.
func TestStruct(t *testing.T) {
	type settings struct {
		Name    string        `yaml:"name"`
		Wait    time.Duration `yaml:"wait"`
		Count   int           `yaml:"count"`
		Seed    uint64        `yaml:"seed"`
		Share   float64       `yaml:"share"`
		On      bool          `yaml:"on"`
		Skipped int           `yaml:"-"`
		Untaged int
	}
	d := &Decoder{File: "f.yaml"}
	var got settings
	v := reflect.ValueOf(&got).Elem()
	pos, err := d.Struct(root(t, "name: x\nwait: 2s\ncount: 3\nseed: 9\nshare: 50%\non: true\nextra: 1\n"), "s", v, d.Scalar, "extra")
	want := settings{Name: "x", Wait: 2 * time.Second, Count: 3, Seed: 9, Share: 0.5, On: true}
	if err != nil || got != want || pos.Lines["extra"] != 7 {
		t.Errorf("Struct = %+v, %v (lines %v); want %+v", got, err, pos.Lines, want)
	}
	_, err = d.Struct(root(t, "Untaged: 1\n"), "s", v, d.Scalar)
	if err == nil || !strings.Contains(err.Error(), `unknown field "Untaged" (want one of count, name, on, seed, share, wait)`) {
		t.Errorf("Struct with an untagged key = %v", err)
	}
	var bad struct {
		C complex128 `yaml:"c"`
	}
	_, err = d.Struct(root(t, "c: 1\n"), "s", reflect.ValueOf(&bad).Elem(), d.Scalar)
	if err == nil || !strings.Contains(err.Error(), "cannot decode into complex128") {
		t.Errorf("Struct into a complex128 = %v", err)
	}
}
