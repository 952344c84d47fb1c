package idempotency

import (
	"errors"
	"strconv"
	"strings"
)

// Header is the request header that carries the key, per the IETF draft
// "The Idempotency-Key HTTP Header Field"
// (draft-ietf-httpapi-idempotency-key-header). XHeader is read when Header
// is absent: the name older APIs use, and the one recoil's Transport also
// treats as a key.
const (
	Header  = "Idempotency-Key"
	XHeader = "X-Idempotency-Key"
)

// DefaultMaxKeyLen is the longest key accepted when Config.MaxKeyLen is
// zero, in bytes of the key itself (quotes and escapes not counted): room
// for a UUID with a prefix, as Stripe allows 255.
const DefaultMaxKeyLen = 255

// ErrKey is matched (errors.Is) by every *KeyError.
var ErrKey = errors.New("idempotency: malformed key")

// KeyError says why an Idempotency-Key header is not a key. It matches
// ErrKey. It is a plain value.
type KeyError struct {
	// Value is the header's value as received (at most 64 bytes of it).
	Value string
	// Reason says what is wrong: "empty", "longer than 255 bytes", …
	Reason string
}

// Error reports the value and the reason.
func (e *KeyError) Error() string {
	return "idempotency: malformed key " + strconv.Quote(e.Value) + ": " + e.Reason
}

// Is reports whether target is ErrKey.
func (e *KeyError) Is(target error) bool { return target == ErrKey }

func keyErr(v, reason string) *KeyError {
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	return &KeyError{Value: v, Reason: reason}
}

// ParseKey reads a key from the values of one Idempotency-Key header field
// (what http.Header holds for it). The draft makes the field a Structured
// Field String (RFC 8941, section 3.3.3): a quoted string of printable
// ASCII in which only \" and \\ are escapes. ParseKey accepts that form
// and, as a documented extension, a bare token (RFC 9110, section 5.6.2:
// a UUID, or the recoil-… keys recoilhttp's Transport sends), so that
// clients written before the draft interoperate. Surrounding spaces are
// ignored. A key that is empty, longer than max bytes (max <= 0 means
// DefaultMaxKeyLen), sent in more than one field line, or followed by
// Structured Field parameters is refused with a *KeyError: a server that
// guessed which of two keys was meant could run a request twice.
func ParseKey(values []string, max int) (string, error) {
	if max <= 0 {
		max = DefaultMaxKeyLen
	}
	switch len(values) {
	case 0:
		return "", keyErr("", "no key")
	case 1:
	default:
		return "", keyErr(strings.Join(values, ", "), "sent in more than one field line")
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return "", keyErr(values[0], "empty")
	}
	var key string
	if v[0] == '"' {
		k, rest, err := parseString(v)
		if err != nil {
			return "", err
		}
		if rest != "" {
			if rest[0] == ';' {
				return "", keyErr(v, "parameters after the key are not supported")
			}
			return "", keyErr(v, "characters after the closing quote")
		}
		key = k
	} else {
		for i := 0; i < len(v); i++ {
			if !tchar(v[i]) {
				return "", keyErr(v, "a bare key must be a token (letters, digits and !#$%&'*+-.^_`|~); quote it as the draft asks: \"…\"")
			}
		}
		key = v
	}
	switch {
	case key == "":
		return "", keyErr(v, "empty")
	case len(key) > max:
		return "", keyErr(v, "longer than "+strconv.Itoa(max)+" bytes")
	}
	return key, nil
}

// parseString reads a Structured Field String at the start of s (which
// begins with a quote) and returns it and what follows the closing quote
// (RFC 8941, section 4.2.5).
func parseString(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i == len(s) {
				return "", "", keyErr(s, "unterminated escape")
			}
			if s[i] != '"' && s[i] != '\\' {
				return "", "", keyErr(s, "only \\\" and \\\\ may be escaped")
			}
			b.WriteByte(s[i])
		case c == '"':
			return b.String(), s[i+1:], nil
		case c < 0x20 || c > 0x7e:
			return "", "", keyErr(s, "a quoted key may hold printable ASCII only")
		default:
			b.WriteByte(c)
		}
	}
	return "", "", keyErr(s, "no closing quote")
}

// tchar reports a token character (RFC 9110, section 5.6.2).
func tchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
