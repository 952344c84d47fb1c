package gateway

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// TimelineError reports what is wrong with a timeline file, and where: the
// line and the field. It matches ErrConfig with errors.Is.
type TimelineError struct {
	// File is the file's name as given to ParseTimeline.
	File string
	// Line is the line of the offending field, counting from 1; 0 when
	// the file is not YAML at all (the YAML error in Err names the line).
	Line int
	// Field is the offending field's path ("outages[1].duration"); empty
	// for a YAML syntax error.
	Field string
	// Err says what is wrong.
	Err error
}

// Error formats the error as file:line: field: what is wrong.
func (e *TimelineError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns Err.
func (e *TimelineError) Unwrap() error { return e.Err }

// Is reports whether target is ErrConfig.
func (e *TimelineError) Is(target error) bool { return target == ErrConfig }

// LoadTimeline reads and parses the timeline file at path (see
// ParseTimeline).
func LoadTimeline(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return ParseTimeline(path, data)
}

// ParseTimeline parses a timeline file: a YAML mapping whose fields are
// those of Config, in snake case, with durations written as Go durations
// ("700ms", "1.5s"). name is used in errors. Every field may be left out;
// an empty file is the zero Config. A field that is unknown, of the wrong
// type or out of range is reported as a *TimelineError naming its line and
// path. The address to listen on is not part of a timeline (it is the
// server's business, not the dependency's).
//
//	window: 200ms          # the counting window
//	seed: 1                # for the random faults
//	outages:               # counted from the first attempt
//	  - start: 0s
//	    duration: 700ms
//	    status: 503        # 529 answers as an overloaded provider
//	    rate: 1            # fraction of attempts failing; 0 means 1
//	    recovery:          # optional: the end waits for the load to fall
//	      below: 5         # attempts per window
//	      for: 300ms
//	failure: {rate: 0.05, status: 500}
//	latency: {dist: exponential, mean: 20ms, min: 0s, max: 1s}
//	reject_field: strict   # the validator's 400
//	allowance: {per_minute: 60, header: X-Api-Key}
//	stream: {events: 8, interval: 10ms, stall_rate: 0.5, stall_after: 2, stall_for: 0s, stall_ping: 0s}
//	headers: {client: X-Client-Id, request: X-Request-Id}
//	max_keys: 100000
func ParseTimeline(name string, data []byte) (Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Config{}, &TimelineError{File: name, Err: err}
	}
	var c Config
	if len(doc.Content) == 0 {
		return c, nil
	}
	d := &tdecoder{file: name, lines: map[string]int{}}
	root := doc.Content[0]
	err := d.mapping(root, "", fields{
		"window":       d.duration(&c.Window),
		"seed":         d.uint64(&c.Seed),
		"outages":      d.outages(&c.Outages),
		"failure":      d.sub(fields{"rate": d.float(&c.FailureRate), "status": d.int(&c.FailureStatus)}),
		"latency":      d.sub(fields{"dist": d.dist(&c.Latency.Dist), "mean": d.duration(&c.Latency.Mean), "min": d.duration(&c.Latency.Min), "max": d.duration(&c.Latency.Max)}),
		"reject_field": d.string(&c.RejectField),
		"allowance":    d.sub(fields{"per_minute": d.int(&c.Allowance), "header": d.string(&c.AllowanceHeader)}),
		"stream": d.sub(fields{
			"events": d.int(&c.Stream.Events), "interval": d.duration(&c.Stream.Interval),
			"stall_rate": d.float(&c.Stream.StallRate), "stall_after": d.int(&c.Stream.StallAfter),
			"stall_for": d.duration(&c.Stream.StallFor), "stall_ping": d.duration(&c.Stream.StallPing),
		}),
		"headers":  d.sub(fields{"client": d.string(&c.ClientHeader), "request": d.string(&c.RequestHeader)}),
		"max_keys": d.int(&c.MaxKeys),
	})
	if err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			line := d.lines[ce.field]
			if line == 0 {
				line = root.Line
			}
			return Config{}, &TimelineError{File: name, Line: line, Field: ce.field, Err: errors.New(ce.msg)}
		}
		return Config{}, &TimelineError{File: name, Line: root.Line, Err: err}
	}
	return c, nil
}

// tdecoder walks a timeline's YAML nodes, remembering each field's line so
// that Validate's complaints can be placed.
type tdecoder struct {
	file  string
	lines map[string]int
}

// decodeFunc decodes one field's value node; field is its path.
type decodeFunc func(n *yaml.Node, field string) error

type fields map[string]decodeFunc

func (d *tdecoder) fail(n *yaml.Node, field, format string, args ...any) error {
	return &TimelineError{File: d.file, Line: n.Line, Field: field, Err: fmt.Errorf(format, args...)}
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// mapping decodes a mapping node with the given fields; a key not among
// them is an error naming the keys that are.
func (d *tdecoder) mapping(n *yaml.Node, field string, fs fields) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		what := field
		if what == "" {
			what = "the timeline"
		}
		return d.fail(n, field, "%s must be a mapping of fields", what)
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fs[k.Value]
		path := join(field, k.Value)
		if line, dup := seen[k.Value]; dup {
			return d.fail(k, path, "given twice (first on line %d)", line)
		}
		seen[k.Value] = k.Line
		if !ok {
			names := make([]string, 0, len(fs))
			for name := range fs {
				names = append(names, name)
			}
			sort.Strings(names)
			return d.fail(k, path, "unknown field %q (want one of %s)", k.Value, strings.Join(names, ", "))
		}
		d.lines[path] = v.Line
		if err := f(v, path); err != nil {
			return err
		}
	}
	return nil
}

func (d *tdecoder) sub(fs fields) decodeFunc {
	return func(n *yaml.Node, field string) error { return d.mapping(n, field, fs) }
}

func (d *tdecoder) scalar(n *yaml.Node, field, want string) (string, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return "", d.fail(n, field, "want %s", want)
	}
	return n.Value, nil
}

func (d *tdecoder) duration(p *time.Duration) decodeFunc {
	return func(n *yaml.Node, field string) error {
		s, err := d.scalar(n, field, "a duration such as 700ms")
		if err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return d.fail(n, field, "%q is not a duration (write it as 700ms, 1.5s, 2m)", s)
		}
		*p = v
		return nil
	}
}

func (d *tdecoder) int(p *int) decodeFunc {
	return func(n *yaml.Node, field string) error {
		s, err := d.scalar(n, field, "a whole number")
		if err != nil {
			return err
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return d.fail(n, field, "%q is not a whole number", s)
		}
		*p = v
		return nil
	}
}

func (d *tdecoder) uint64(p *uint64) decodeFunc {
	return func(n *yaml.Node, field string) error {
		s, err := d.scalar(n, field, "a whole number")
		if err != nil {
			return err
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return d.fail(n, field, "%q is not a whole number of 0 or more", s)
		}
		*p = v
		return nil
	}
}

func (d *tdecoder) float(p *float64) decodeFunc {
	return func(n *yaml.Node, field string) error {
		s, err := d.scalar(n, field, "a number")
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return d.fail(n, field, "%q is not a number", s)
		}
		*p = v
		return nil
	}
}

func (d *tdecoder) string(p *string) decodeFunc {
	return func(n *yaml.Node, field string) error {
		s, err := d.scalar(n, field, "a string")
		if err != nil {
			return err
		}
		*p = s
		return nil
	}
}

func (d *tdecoder) dist(p *Distribution) decodeFunc {
	return func(n *yaml.Node, field string) error {
		var s string
		if err := d.string(&s)(n, field); err != nil {
			return err
		}
		*p = Distribution(s)
		return nil
	}
}

func (d *tdecoder) outages(p *[]Outage) decodeFunc {
	return func(n *yaml.Node, field string) error {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return d.fail(n, field, "want a list of outages")
		}
		for i, item := range n.Content {
			var o Outage
			path := field + "[" + strconv.Itoa(i) + "]"
			d.lines[path] = item.Line
			err := d.mapping(item, path, fields{
				"start":    d.duration(&o.Start),
				"duration": d.duration(&o.Duration),
				"status":   d.int(&o.Status),
				"rate":     d.float(&o.Rate),
				"recovery": d.sub(fields{"below": d.int(&o.Recovery.Below), "for": d.duration(&o.Recovery.For)}),
			})
			if err != nil {
				return err
			}
			*p = append(*p, o)
		}
		return nil
	}
}
