package fleet

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxHeaderCount bounds a limit or remaining count read from a header: 2^53,
// the largest integer the Lua scripts hold exactly. A larger one is an error.
const maxHeaderCount = 1 << 53

// maxReset bounds a reset read from a header. Providers reset per-minute and
// per-day limits; a reset more than a week away is not one of them.
const maxReset = 7 * 24 * time.Hour

// ErrHeader is wrapped by every error ParseHeader returns.
var ErrHeader = errors.New("fleet: malformed rate-limit header")

// Meter is what a provider's rate-limit headers say about one meter
// (requests or tokens): the limit, what is left of it, and how long until it
// is whole again. A field the response did not carry, or carried malformed,
// is unknown.
type Meter struct {
	// Limit is the meter's limit per its period; zero means unknown.
	Limit int64
	// Remaining is what is left of it; negative means unknown.
	Remaining int64
	// Reset is how long until the meter is whole again (OpenAI's
	// x-ratelimit-reset-*; for Anthropic, the anthropic-ratelimit-*-reset
	// instant less now, and zero when that instant has passed); negative
	// means unknown.
	Reset time.Duration
}

// Known reports whether the response said anything about the meter.
func (m Meter) Known() bool { return m.Limit > 0 || m.Remaining >= 0 || m.Reset >= 0 }

// Limits is what one response's rate-limit headers say.
type Limits struct {
	// Requests is the requests meter.
	Requests Meter
	// Tokens is the tokens meter.
	Tokens Meter
}

// family names one provider's headers for one meter.
type family struct {
	limit, remaining, reset string
	rfc3339                 bool // reset is an instant (Anthropic), not a duration (OpenAI)
}

var (
	requestFamilies = [...]family{
		{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests", false},
		{"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset", true},
	}
	tokenFamilies = [...]family{
		{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens", false},
		{"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset", true},
	}
)

// ParseHeader reads the rate-limit headers of a model provider's response:
// OpenAI's x-ratelimit-limit-requests, x-ratelimit-remaining-requests and
// x-ratelimit-reset-requests (a Go-style duration such as "6m0s", "1s" or
// "20ms") and their -tokens variants, and Anthropic's
// anthropic-ratelimit-requests-limit, -remaining and -reset (an RFC 3339
// instant) and their tokens variants. now dates Anthropic's resets.
//
// Where both families are present, OpenAI's is read first and Anthropic's
// fills only what it left unknown. A malformed value (not a decimal count,
// negative, above 2^53, a reset that is not a duration or an instant, or more
// than a week away, a remaining above the limit) leaves its field unknown
// and is reported in the error, which wraps ErrHeader and names the header
// and the value; the fields that parsed are returned with it. ParseHeader
// never panics.
func ParseHeader(h http.Header, now time.Time) (Limits, error) {
	var errs []error
	l := Limits{Requests: parseMeter(h, requestFamilies[:], now, &errs), Tokens: parseMeter(h, tokenFamilies[:], now, &errs)}
	return l, errors.Join(errs...)
}

func parseMeter(h http.Header, fams []family, now time.Time, errs *[]error) Meter {
	m := Meter{Remaining: -1, Reset: -1}
	for _, f := range fams {
		if v, ok := header(h, f.limit); ok && m.Limit == 0 {
			if n, err := parseCount(f.limit, v); err != nil {
				*errs = append(*errs, err)
			} else if n == 0 {
				*errs = append(*errs, fmt.Errorf("%w: %s: %q: a limit must be positive", ErrHeader, f.limit, v))
			} else {
				m.Limit = n
			}
		}
		if v, ok := header(h, f.remaining); ok && m.Remaining < 0 {
			if n, err := parseCount(f.remaining, v); err != nil {
				*errs = append(*errs, err)
			} else {
				m.Remaining = n
			}
		}
		if v, ok := header(h, f.reset); ok && m.Reset < 0 {
			if d, err := parseReset(f, v, now); err != nil {
				*errs = append(*errs, err)
			} else {
				m.Reset = d
			}
		}
	}
	if m.Limit > 0 && m.Remaining > m.Limit {
		*errs = append(*errs, fmt.Errorf("%w: remaining %d is above the limit %d", ErrHeader, m.Remaining, m.Limit))
		m.Remaining = -1
	}
	return m
}

// header returns the first value of the canonical key name, trimmed.
func header(h http.Header, name string) (string, bool) {
	vs := h[name]
	if len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(vs[0]), true
}

func parseCount(name, v string) (int64, error) {
	if v == "" || v[0] < '0' || v[0] > '9' { // no sign, no space, no empty value
		return 0, fmt.Errorf("%w: %s: %q is not a count", ErrHeader, name, v)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > maxHeaderCount {
		return 0, fmt.Errorf("%w: %s: %q is not a count up to 2^53", ErrHeader, name, v)
	}
	return n, nil
}

func parseReset(f family, v string, now time.Time) (time.Duration, error) {
	var d time.Duration
	if f.rfc3339 {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %q is not an RFC 3339 instant", ErrHeader, f.reset, v)
		}
		d = max(t.Sub(now), 0) // an instant already past: whole now
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d < 0 {
			return 0, fmt.Errorf("%w: %s: %q is not a non-negative duration such as 6m0s or 20ms", ErrHeader, f.reset, v)
		}
	}
	if d > maxReset {
		return 0, fmt.Errorf("%w: %s: %q is more than a week away", ErrHeader, f.reset, v)
	}
	return d, nil
}
