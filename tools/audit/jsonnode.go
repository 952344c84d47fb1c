package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// readJSON parses a JSON document into yaml nodes that carry the line each
// value began on, so that the gRPC service config is read, and its problems
// reported, as the YAML files are. Duplicate keys, trailing data and more
// than maxNodes values are errors.
func readJSON(file string, data []byte) (*yaml.Node, error) {
	j := &jsonReader{file: file, data: data, lines: []int{0}, dec: json.NewDecoder(bytes.NewReader(data))}
	for i, b := range data {
		if b == '\n' {
			j.lines = append(j.lines, i+1)
		}
	}
	j.dec.UseNumber()
	root, err := j.value(0)
	if err != nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, &Error{File: file, Err: errors.New("the file is empty")}
		}
		return nil, err
	}
	if off := j.start(); off < int64(len(data)) {
		return nil, &Error{File: file, Line: j.lineAt(off), Err: errors.New("more after the JSON document ends")}
	}
	return root, nil
}

// jsonReader reads a JSON document token by token.
type jsonReader struct {
	file  string
	data  []byte
	lines []int // offsets at which lines begin
	dec   *json.Decoder
	nodes int
}

func (j *jsonReader) lineAt(off int64) int {
	return sort.Search(len(j.lines), func(i int) bool { return int64(j.lines[i]) > off })
}

// start finds where the next token begins: after the previous one, past
// white space and the separators the decoder consumes.
func (j *jsonReader) start() int64 {
	off := j.dec.InputOffset()
	for off < int64(len(j.data)) && strings.IndexByte(" \t\r\n,:", j.data[off]) >= 0 {
		off++
	}
	return off
}

func (j *jsonReader) fail(off int64, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the JSON ends before it is complete"
	}
	return &Error{File: j.file, Line: j.lineAt(max(off-1, 0)), Err: errors.New(msg)}
}

// value reads one value at nesting depth.
func (j *jsonReader) value(depth int) (*yaml.Node, error) {
	off := j.start()
	tok, err := j.dec.Token()
	if err != nil {
		return nil, j.fail(off, err)
	}
	if j.nodes++; j.nodes > maxNodes {
		return nil, &Error{File: j.file, Line: j.lineAt(off), Err: fmt.Errorf("the file is too large (over %d values)", maxNodes)}
	}
	if depth > 100 {
		return nil, &Error{File: j.file, Line: j.lineAt(off), Err: errors.New("nested more than 100 deep")}
	}
	n := &yaml.Node{Line: j.lineAt(off), Column: 1}
	switch t := tok.(type) {
	case json.Delim:
		if err := j.container(n, t, depth); err != nil {
			return nil, err
		}
	case string:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!str", t
	case json.Number:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!float", t.String()
	case bool:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!bool", strconv.FormatBool(t)
	case nil:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!null", "null"
	}
	return n, nil
}

// container reads an object's members or an array's elements into n, and
// the closing delimiter.
func (j *jsonReader) container(n *yaml.Node, open json.Delim, depth int) error {
	if open == '{' {
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
		seen := map[string]int{}
		for j.dec.More() {
			koff := j.start()
			kt, err := j.dec.Token()
			if err != nil {
				return j.fail(koff, err)
			}
			key, _ := kt.(string)
			if first, dup := seen[key]; dup {
				return &Error{File: j.file, Line: j.lineAt(koff), Field: key, Err: fmt.Errorf("given twice (first on line %d)", first)}
			}
			seen[key] = j.lineAt(koff)
			v, err := j.value(depth + 1)
			if err != nil {
				return err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: j.lineAt(koff)}, v)
		}
	} else {
		n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		for j.dec.More() {
			v, err := j.value(depth + 1)
			if err != nil {
				return err
			}
			n.Content = append(n.Content, v)
		}
	}
	eoff := j.start()
	if _, err := j.dec.Token(); err != nil { // the closing delimiter
		return j.fail(eoff, err)
	}
	return nil
}
