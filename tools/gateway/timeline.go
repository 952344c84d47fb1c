package gateway

import (
	"errors"
	"maps"
	"os"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// TimelineError reports what is wrong with a timeline file, and where: the
// line and the field. It matches ErrConfig with errors.Is.
type TimelineError struct {
	// File is the file's name as given to ParseTimeline.
	File string
	// Line is the line of the offending field, counting from 1; 0 when
	// it is not known.
	Line int
	// Field is the offending field's path ("outages[1].duration"); empty
	// for a YAML syntax error or a problem with the whole file.
	Field string
	// Err says what is wrong.
	Err error
}

// Error formats the error as file:line: field: what is wrong, as every
// YAML file of the repository's is reported.
func (e *TimelineError) Error() string { return (*strictyaml.Error)(e).Error() }

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
//	serial: 12ms           # one attempt at a time, each holding the lane 12ms
//	reject_field: strict   # the validator's 400
//	allowance: {per_minute: 60, header: X-Api-Key}
//	stream: {events: 8, interval: 10ms, stall_rate: 0.5, stall_after: 2, stall_for: 0s, stall_ping: 0s}
//	headers: {client: X-Client-Id, request: X-Request-Id}
//	max_keys: 100000
//	charge: {path: /v1/charges, drop_rate: 0.2, idempotency: true}
func ParseTimeline(name string, data []byte) (Config, error) {
	var c Config
	root, err := strictyaml.Read(name, data)
	if err != nil || root == nil {
		return c, timelineError(err)
	}
	d := &tdecoder{Decoder: strictyaml.Decoder{File: name}, lines: map[string]int{}}
	err = d.mapping(root, "", fields{
		"window":  d.duration(&c.Window),
		"seed":    d.uint64(&c.Seed),
		"outages": d.outages(&c.Outages),
		"failure": d.sub(fields{"rate": d.float(&c.FailureRate), "status": d.int(&c.FailureStatus)}),
		"latency": d.sub(fields{"dist": d.dist(&c.Latency.Dist), "mean": d.duration(&c.Latency.Mean), "min": d.duration(&c.Latency.Min), "max": d.duration(&c.Latency.Max),
			"knee": d.int(&c.Latency.Knee),
			"tail": d.sub(fields{"rate": d.float(&c.Latency.Tail.Rate), "min": d.duration(&c.Latency.Tail.Min), "max": d.duration(&c.Latency.Tail.Max)})}),
		"reject_field": d.string(&c.RejectField),
		"serial":       d.duration(&c.Serial),
		"allowance":    d.sub(fields{"per_minute": d.int(&c.Allowance), "header": d.string(&c.AllowanceHeader)}),
		"stream": d.sub(fields{
			"events": d.int(&c.Stream.Events), "interval": d.duration(&c.Stream.Interval),
			"stall_rate": d.float(&c.Stream.StallRate), "stall_after": d.int(&c.Stream.StallAfter),
			"stall_for": d.duration(&c.Stream.StallFor), "stall_ping": d.duration(&c.Stream.StallPing),
		}),
		"headers":  d.sub(fields{"client": d.string(&c.ClientHeader), "request": d.string(&c.RequestHeader)}),
		"charge":   d.sub(fields{"path": d.string(&c.Charge.Path), "drop_rate": d.float(&c.Charge.DropRate), "idempotency": d.bool(&c.Charge.Idempotency)}),
		"max_keys": d.int(&c.MaxKeys),
	})
	if err != nil {
		return Config{}, timelineError(err)
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

// timelineError makes a decoding problem a *TimelineError.
func timelineError(err error) error {
	var e *strictyaml.Error
	if errors.As(err, &e) {
		return (*TimelineError)(e)
	}
	return err
}

// tdecoder walks a timeline's YAML nodes with the shared decoder,
// remembering each field's line so that Validate's complaints can be
// placed.
type tdecoder struct {
	strictyaml.Decoder
	lines map[string]int
}

// decodeFunc decodes one field's value node; field is its path.
type decodeFunc func(n *yaml.Node, field string) error

type fields map[string]decodeFunc

// mapping decodes a mapping node with the given fields.
func (d *tdecoder) mapping(n *yaml.Node, field string, fs fields) error {
	_, err := d.Mapping(n, field, slices.Collect(maps.Keys(fs)), func(k string, v *yaml.Node, path string) error {
		d.lines[path] = v.Line
		return fs[k](v, path)
	})
	return err
}

func (d *tdecoder) sub(fs fields) decodeFunc {
	return func(n *yaml.Node, field string) error { return d.mapping(n, field, fs) }
}

// set adapts one of the shared decoder's scalar methods to a field of c.
func set[T any](p *T, decode func(*yaml.Node, string) (T, error)) decodeFunc {
	return func(n *yaml.Node, field string) error {
		v, err := decode(n, field)
		if err == nil {
			*p = v
		}
		return err
	}
}

func (d *tdecoder) duration(p *time.Duration) decodeFunc { return set(p, d.Duration) }
func (d *tdecoder) int(p *int) decodeFunc                { return set(p, d.Int) }
func (d *tdecoder) uint64(p *uint64) decodeFunc          { return set(p, d.Uint64) }
func (d *tdecoder) float(p *float64) decodeFunc          { return set(p, d.Float) }
func (d *tdecoder) string(p *string) decodeFunc          { return set(p, d.String) }
func (d *tdecoder) bool(p *bool) decodeFunc              { return set(p, d.Bool) }

func (d *tdecoder) dist(p *Distribution) decodeFunc {
	return func(n *yaml.Node, field string) error {
		s, err := d.String(n, field)
		*p = Distribution(s)
		return err
	}
}

func (d *tdecoder) outages(p *[]Outage) decodeFunc {
	return func(n *yaml.Node, field string) error {
		return d.List(n, field, func(i int, item *yaml.Node) error {
			var o Outage
			path := strictyaml.Index(field, i)
			d.lines[path] = item.Line
			err := d.mapping(item, path, fields{
				"start":    d.duration(&o.Start),
				"duration": d.duration(&o.Duration),
				"status":   d.int(&o.Status),
				"code":     d.string(&o.Code),
				"rate":     d.float(&o.Rate),
				"recovery": d.sub(fields{"below": d.int(&o.Recovery.Below), "for": d.duration(&o.Recovery.For)}),
			})
			*p = append(*p, o)
			return err
		})
	}
}
