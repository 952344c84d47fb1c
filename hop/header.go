package hop

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// The header names of the hop protocol, in canonical HTTP form. gRPC
// metadata carries the same names in lower case ("recoil-retry-budget",
// and so on); [Metadata] maps them. docs/hop-protocol.md in the repository
// is the specification.
const (
	// HeaderBudget, on a request, is the retry budget that remains for the
	// whole call tree below the sender, the receiver included: how many more
	// retries may be made anywhere beneath, by anyone. A hop whose remaining
	// budget is 0 does not retry. Decimal, 0 to [MaxBudget].
	HeaderBudget = "Recoil-Retry-Budget"
	// HeaderDeadline, on a request, is the time the caller will still wait
	// for the answer, in whole milliseconds, rounded down. Decimal, 0 to
	// [MaxDeadline] in milliseconds; 0 means the time is already up.
	HeaderDeadline = "Recoil-Deadline-Ms"
	// HeaderAttempt, on a request, is the attempt number at the sending hop:
	// 1 for the first attempt, 2 for the first retry. Decimal, 1 to
	// [MaxAttempt].
	HeaderAttempt = "Recoil-Attempt"
	// HeaderSpent, on a response, is the number of retries made at and
	// below the responding hop while serving the request. The caller
	// subtracts it from its own remaining budget and adds it to what it
	// reports upward. Decimal, 0 to [MaxBudget]; absent means 0.
	HeaderSpent = "Recoil-Retries-Spent"
	// HeaderRetry, on a response, set to "no", tells the caller not to retry
	// the request: the server is shedding load and a retry would only add
	// to it. "no" is the only value defined; case is not significant.
	HeaderRetry = "Recoil-Retry"
)

// Bounds on the values a header may carry. Values are read as decimal
// integers; a value above its bound is clamped to it, so a peer cannot ask a
// hop for more than these however large a number it sends.
const (
	// MaxBudget bounds [HeaderBudget] and [HeaderSpent]. No honest call tree
	// needs a thousand retries for one request (gRPC's retry throttle caps
	// its token bucket at the same number); the cap keeps a hostile or
	// mistaken header from granting more.
	MaxBudget = 1000
	// MaxDeadline bounds [HeaderDeadline]: a caller waiting longer than a
	// day is told a day.
	MaxDeadline = 24 * time.Hour
	// MaxAttempt bounds [HeaderAttempt].
	MaxAttempt = 1000
	// maxValue is the largest number a header may spell at all: anything
	// that does not fit in a signed 32-bit integer cannot have come from an
	// honest implementation in any language, and is rejected rather than
	// clamped.
	maxValue = 1<<31 - 1
)

// DefaultDeadlineMargin is what a receiving hop takes off the remaining
// deadline it is sent before it sets its own: time for its answer to travel
// back. A hop whose deadline minus the margin is not positive has no time to
// do anything and should answer at once without starting work.
const DefaultDeadlineMargin = 5 * time.Millisecond

// Getter reads one header value; "" means absent. http.Header satisfies it,
// and so does [Metadata] for gRPC metadata. Only the first value of a
// repeated header is read.
type Getter interface {
	Get(key string) string
}

// Setter replaces a header's values with one value. http.Header satisfies
// it, and so does [Metadata] for gRPC metadata.
type Setter interface {
	Set(key, value string)
}

// Metadata adapts gRPC metadata to [Getter] and [Setter] without importing
// gRPC: metadata.MD is a map[string][]string, so hop.Metadata(md) converts
// it in place, with no copy. Keys are lower-cased as gRPC requires, so
// HeaderBudget is read and written as "recoil-retry-budget", and likewise
// "recoil-deadline-ms", "recoil-attempt", "recoil-retries-spent" and
// "recoil-retry". As with metadata.MD, Set on a nil Metadata panics.
type Metadata map[string][]string

// Get returns the first value of the lower-cased key, or "" if there is none.
func (m Metadata) Get(key string) string {
	if v := m[lower(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set replaces the values of the lower-cased key with value.
func (m Metadata) Set(key, value string) {
	m[lower(key)] = []string{value}
}

// lower returns key in lower case; the protocol's own names map without
// allocating.
func lower(key string) string {
	switch key {
	case HeaderBudget:
		return "recoil-retry-budget"
	case HeaderDeadline:
		return "recoil-deadline-ms"
	case HeaderAttempt:
		return "recoil-attempt"
	case HeaderSpent:
		return "recoil-retries-spent"
	case HeaderRetry:
		return "recoil-retry"
	}
	return strings.ToLower(key)
}

// Errors a malformed header value is reported with, inside a *[HeaderError].
var (
	// ErrSyntax: the value is not what the header allows: for the numeric
	// headers, anything but ASCII decimal digits (a sign, a space, an
	// exponent, a fraction, a list); for HeaderRetry, anything but "no".
	ErrSyntax = errors.New("hop: malformed header value")
	// ErrRange: the value is well formed but impossible: a number too large
	// for a signed 32-bit integer, or an attempt number of 0.
	ErrRange = errors.New("hop: header value out of range")
)

// HeaderError reports a malformed header value. The parsers that return one
// treat the header as absent. errors.Is(err, ErrSyntax) and
// errors.Is(err, ErrRange) tell the two kinds apart.
type HeaderError struct {
	Header string // the canonical header name, one of the Header constants
	Value  string // the value as received
	Err    error  // ErrSyntax or ErrRange
}

// maxQuoted is how much of a bad value an error message repeats: the value
// came from outside and may be long.
const maxQuoted = 64

// Error describes the header, its value (quoted, and shortened if long) and
// what is wrong with it.
func (e *HeaderError) Error() string {
	v := e.Value
	if len(v) > maxQuoted {
		v = v[:maxQuoted]
	}
	q := strconv.Quote(v)
	if len(v) < len(e.Value) {
		q += "…"
	}
	var what string
	switch {
	case e.Err == nil:
		what = "malformed"
	case e.Header == HeaderRetry:
		what = `invalid syntax, want "no"`
	case errors.Is(e.Err, ErrRange) && e.Header == HeaderAttempt:
		what = "out of range, want 1 to " + strconv.Itoa(maxValue)
	case errors.Is(e.Err, ErrRange):
		what = "out of range, want at most " + strconv.Itoa(maxValue)
	case errors.Is(e.Err, ErrSyntax):
		what = "invalid syntax, want decimal digits only"
	default:
		what = e.Err.Error()
	}
	return "hop: " + e.Header + " " + q + ": " + what + "; ignored"
}

// Unwrap returns Err.
func (e *HeaderError) Unwrap() error { return e.Err }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseUint parses v as 1*DIGIT, the grammar RFC 9110 gives Max-Forwards and
// Content-Length, and returns it clamped to hi. Anything else is
// ErrSyntax; a number above maxValue is ErrRange.
func parseUint(v string, hi int) (int, error) {
	if v == "" || !isDigits(v) {
		return 0, ErrSyntax
	}
	n := 0
	for i := 0; i < len(v); i++ {
		n = n*10 + int(v[i]-'0')
		if n > maxValue {
			return 0, ErrRange
		}
	}
	return min(n, hi), nil
}
