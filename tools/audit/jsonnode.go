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
	lines := []int{0} // offsets at which lines begin
	for i, b := range data {
		if b == '\n' {
			lines = append(lines, i+1)
		}
	}
	lineAt := func(off int64) int { return sort.Search(len(lines), func(i int) bool { return int64(lines[i]) > off }) }
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	nodes := 0
	// start finds where the next token begins: after the previous one,
	// past white space and the separators the decoder consumes.
	start := func() int64 {
		off := dec.InputOffset()
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
			off++
		}
		return off
	}
	fail := func(off int64, err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "the JSON ends before it is complete"
		}
		return &Error{File: file, Line: lineAt(max(off-1, 0)), Err: errors.New(msg)}
	}
	var value func(depth int) (*yaml.Node, error)
	value = func(depth int) (*yaml.Node, error) {
		off := start()
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(off, err)
		}
		if nodes++; nodes > maxNodes {
			return nil, &Error{File: file, Line: lineAt(off), Err: fmt.Errorf("the file is too large (over %d values)", maxNodes)}
		}
		if depth > 100 {
			return nil, &Error{File: file, Line: lineAt(off), Err: errors.New("nested more than 100 deep")}
		}
		n := &yaml.Node{Line: lineAt(off), Column: 1}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				n.Kind, n.Tag = yaml.MappingNode, "!!map"
				seen := map[string]int{}
				for dec.More() {
					koff := start()
					kt, err := dec.Token()
					if err != nil {
						return nil, fail(koff, err)
					}
					key, _ := kt.(string)
					if first, dup := seen[key]; dup {
						return nil, &Error{File: file, Line: lineAt(koff), Field: key, Err: fmt.Errorf("given twice (first on line %d)", first)}
					}
					seen[key] = lineAt(koff)
					v, err := value(depth + 1)
					if err != nil {
						return nil, err
					}
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: lineAt(koff)}, v)
				}
			case '[':
				n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
				for dec.More() {
					v, err := value(depth + 1)
					if err != nil {
						return nil, err
					}
					n.Content = append(n.Content, v)
				}
			}
			eoff := start()
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return nil, fail(eoff, err)
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
	root, err := value(0)
	if err != nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, &Error{File: file, Err: errors.New("the file is empty")}
		}
		return nil, err
	}
	if off := start(); off < int64(len(data)) {
		return nil, &Error{File: file, Line: lineAt(off), Err: errors.New("more after the JSON document ends")}
	}
	return root, nil
}
