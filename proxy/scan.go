package proxy

import (
	"encoding/json"
	"unicode/utf8"
)

// scanModel reports whether body is JSON and, if it is an object with a
// top-level "model" string, that string: the model the client asks for.
// It reads the body once more after validJSON, without building values.
func scanModel(body []byte) (model string, valid bool) {
	if !validJSON(body) {
		return "", false
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return "", true
	}
	i++
	for {
		i = skipSpace(body, i)
		if i >= len(body) || body[i] == '}' {
			return "", true
		}
		kStart := i
		i = skipString(body, i)
		key := body[kStart:i]
		i = skipSpace(body, i)
		i++ // ':'
		i = skipSpace(body, i)
		vStart := i
		i = skipValue(body, i)
		if string(key) == `"model"` && body[vStart] == '"' {
			var s string
			if json.Unmarshal(body[vStart:i], &s) == nil && utf8.ValidString(s) {
				return s, true
			}
			return "", true
		}
		i = skipSpace(body, i)
		if i < len(body) && body[i] == ',' {
			i++
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the (valid) JSON value at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
		i++
	}
	return i
}
