package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// maxDepth bounds how deep scanBody follows nested JSON.
const maxDepth = 64

// scanBody reads a JSON request body and reports whether its top-level
// "stream" is true and, if field is not empty, where the first object key
// equal to field is, in document order: the path of the object holding it,
// as names and array indexes. A body that is not JSON passes.
func scanBody(body []byte, field string) (stream bool, where []string, found bool) {
	s := scanner{dec: json.NewDecoder(bytes.NewReader(body)), field: field}
	tok, err := s.dec.Token()
	if err != nil {
		return false, nil, false
	}
	s.value(tok, nil)
	return s.stream, s.where, s.found
}

type scanner struct {
	dec    *json.Decoder
	field  string
	stream bool
	where  []string
	found  bool
	failed bool
}

// value reads the rest of the value that begins with tok, at path.
func (s *scanner) value(tok json.Token, path []string) {
	d, ok := tok.(json.Delim)
	if !ok || s.failed {
		return
	}
	if len(path) >= maxDepth {
		s.failed = true
		return
	}
	for i := 0; s.dec.More() && !s.failed; i++ {
		var key string
		if d == '{' {
			kt, err := s.dec.Token()
			k, isKey := kt.(string)
			if err != nil || !isKey {
				s.failed = true
				return
			}
			key = k
			if s.field != "" && key == s.field && !s.found {
				s.found, s.where = true, append([]string(nil), path...)
			}
		} else {
			key = strconv.Itoa(i)
		}
		vt, err := s.dec.Token()
		if err != nil {
			s.failed = true
			return
		}
		if d == '{' && len(path) == 0 && key == "stream" && vt == true {
			s.stream = true
		}
		s.value(vt, append(path, key))
	}
	if _, err := s.dec.Token(); err != nil { // the closing delimiter
		s.failed = true
	}
}

// rejection is the validator's message for field found at where, as
// Anthropic words it ("tools.0.input_schema: unknown field \"strict\"").
func rejection(where []string, field string) string {
	msg := "unknown field " + strconv.Quote(field)
	if len(where) > 0 {
		msg = strings.Join(where, ".") + ": " + msg
	}
	return msg
}
