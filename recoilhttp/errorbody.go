package recoilhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// MaxErrorBody is the most of an error response's body worth reading to
// classify it: provider error bodies are a few hundred bytes, and a proxy's
// HTML error page is judged by its first bytes.
const MaxErrorBody = 64 << 10

// maxEmptyReads is how many consecutive (0, nil) reads a peek tolerates
// before giving up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// PeekBody reads at most limit bytes of resp.Body and returns them, leaving
// resp.Body a body that yields the full original stream: the peeked bytes
// followed by the rest, and whose Close closes the original body. It never
// asks the original body for more than limit bytes in total, and stops early
// at its end.
//
// If reading fails, PeekBody returns the bytes read and the error, and the
// restored body yields those bytes and then the same error. With a nil
// response, a nil body, http.NoBody or limit <= 0 it reads nothing and
// returns nil, nil.
func PeekBody(resp *http.Response, limit int) ([]byte, error) {
	if resp == nil || resp.Body == nil || resp.Body == http.NoBody || limit <= 0 {
		return nil, nil
	}
	orig := resp.Body
	size := min(limit, 512)
	if cl := resp.ContentLength; cl >= 0 && cl < int64(limit) {
		size = int(cl) + 1 // room to see the end without growing
	}
	buf, err := readAtMost(orig, make([]byte, 0, size), limit)
	if errors.Is(err, io.ErrNoProgress) {
		// The body made no progress but did not fail: the rest may follow.
		resp.Body = &peekedBody{buf: buf, rest: orig, closer: orig}
		return buf, err
	}
	resp.Body, err = replayBody(buf, orig, err)
	return buf, err
}

// readAtMost appends to buf what r yields until limit bytes are in buf, r
// ends (io.EOF is returned) or r fails.
func readAtMost(r io.Reader, buf []byte, limit int) ([]byte, error) {
	empty := 0
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // let append choose the growth
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
		if n > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			return buf, io.ErrNoProgress
		}
	}
	return buf, nil
}

// peekedBody replays buf, then reads rest, or, with rest nil, returns err
// (io.EOF if err is nil). Close closes the original body.
type peekedBody struct {
	buf    []byte
	off    int
	rest   io.Reader
	err    error
	closer io.Closer
}

func (b *peekedBody) Read(p []byte) (int, error) {
	if b.off < len(b.buf) {
		n := copy(p, b.buf[b.off:])
		b.off += n
		return n, nil
	}
	if b.rest != nil {
		return b.rest.Read(p)
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

func (b *peekedBody) Close() error { return b.closer.Close() }

// ProviderError is what an OpenAI- or Anthropic-style JSON error body says.
// Its fields are empty where the body says nothing (or null). The zero value
// is "no error found". It is a plain value, safe to copy and share.
type ProviderError struct {
	// Type is the error's type: Anthropic's "rate_limit_error",
	// "overloaded_error", "invalid_request_error"; OpenAI's
	// "insufficient_quota", "tokens", "invalid_request_error". For a
	// Google-style body without a type it is the "status" field
	// ("RESOURCE_EXHAUSTED").
	Type string
	// Code is OpenAI's machine-readable code ("insufficient_quota",
	// "rate_limit_exceeded", "context_length_exceeded"); a numeric code is
	// given as its decimal text.
	Code string
	// Message is the human-readable message, such as the validator's
	// complaint about the field it rejected.
	Message string
	// Param is the request parameter the error concerns (OpenAI), if any.
	Param string
}

// errorFields is the inside of an error object, in any of the supported
// dialects. Raw messages let a field be a string, a number or null.
type errorFields struct {
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message json.RawMessage `json:"message"`
	Param   json.RawMessage `json:"param"`
	Status  json.RawMessage `json:"status"`
}

// errorEnvelope is a whole error body: {"error": …} or a bare message.
type errorEnvelope struct {
	Error json.RawMessage `json:"error"`
	errorFields
}

// ParseErrorBody parses a provider's JSON error body. It understands
//
//   - Anthropic's {"type":"error","error":{"type":"rate_limit_error","message":"…"},"request_id":"…"};
//   - OpenAI's {"error":{"message":"…","type":"insufficient_quota","param":null,"code":"insufficient_quota"}};
//   - a bare {"error":"text"} or {"message":"…"} (with "type" and "code"
//     beside it, as in an OpenAI Responses stream's error event);
//   - any of these as the first element of a JSON array.
//
// isJSON reports whether body is JSON at all: false for a proxy's HTML page or
// a truncated body. ok reports whether an error with a type, code or message
// was found; a JSON body without one (or with "error": null) gives ok false.
// ParseErrorBody does work linear in len(body); it is safe for concurrent use.
func ParseErrorBody(body []byte) (pe ProviderError, isJSON bool, ok bool) {
	if !json.Valid(body) {
		return ProviderError{}, false, false
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) > 0 && body[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
			return ProviderError{}, true, false
		}
		body = arr[0]
	}
	if len(body) == 0 || body[0] != '{' {
		return ProviderError{}, true, false
	}
	var env errorEnvelope
	if json.Unmarshal(body, &env) != nil {
		return ProviderError{}, true, false
	}
	switch e := env.Error; {
	case len(e) > 0 && e[0] == '{':
		var f errorFields
		if json.Unmarshal(e, &f) == nil {
			pe = f.providerError()
		}
	case len(e) > 0 && e[0] == '"':
		pe.Message = scalar(e)
	default:
		pe = env.errorFields.providerError()
		if pe.Message == "" {
			pe = ProviderError{} // a top-level "type" alone is no error message
		}
	}
	if pe.Type == "" && pe.Code == "" && pe.Message == "" {
		return ProviderError{}, true, false // a param alone says no error
	}
	return pe, true, true
}

func (f *errorFields) providerError() ProviderError {
	pe := ProviderError{
		Type:    scalar(f.Type),
		Code:    scalar(f.Code),
		Message: scalar(f.Message),
		Param:   scalar(f.Param),
	}
	if pe.Type == "" {
		pe.Type = scalar(f.Status)
	}
	return pe
}

// scalar returns a JSON string's value or a number's or boolean's text; ""
// for null, objects, arrays and anything else.
func scalar(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	case c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f':
		return string(raw)
	}
	return ""
}

// quotaTags are the error types and codes of 429s that waiting does not
// cure: the account is out of money, or the request is larger than the
// whole per-minute allowance.
var quotaTags = [...]string{
	"insufficient_quota",       // OpenAI: "You exceeded your current quota"
	"credit_balance_exhausted", // OpenAI: prepaid credit used up
	"billing_error",            // Anthropic: a billing problem on the account
	"request_too_large",        // Anthropic's type for an oversized request
}

// QuotaExhausted reports whether the error is one that must never be
// retried even though it arrives as a 429: the type or code is
// insufficient_quota, credit_balance_exhausted, billing_error or
// request_too_large (compared without regard to case), or the message says
// "request too large" in any case — OpenAI's "Request too large for gpt-4o
// … on tokens per min (TPM): Limit 30000, Requested 45000", whose type is
// "tokens" and code "rate_limit_exceeded" like an ordinary rate limit, and
// which no amount of waiting lets through.
func (pe ProviderError) QuotaExhausted() bool {
	for _, tag := range quotaTags {
		if strings.EqualFold(pe.Type, tag) || strings.EqualFold(pe.Code, tag) {
			return true
		}
	}
	return containsFold(pe.Message, "request too large")
}

// containsFold reports whether s contains the lower-case ASCII substr,
// ignoring ASCII case, without allocating.
func containsFold(s, substr string) bool {
	for i := 0; i+len(substr) <= len(s); i++ {
		j := 0
		for ; j < len(substr); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != substr[j] {
				break
			}
		}
		if j == len(substr) {
			return true
		}
	}
	return false
}
