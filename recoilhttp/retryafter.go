package recoilhttp

import (
	"net/http"
	"time"
)

// MaxHeaderWait is the longest wait ServerWait accepts from a response
// header. A longer one — a Retry-After of a month, a reset date years away, a
// value sent in the wrong unit — is not an instruction a retry loop can act
// on but a misconfigured intermediary, so it is treated as absent, like a
// malformed one. 24 hours covers the longest window the providers document (a
// daily request quota).
//
// Waits up to MaxHeaderWait are returned as they are: deciding that a
// legitimate wait is too long to sit through is the retry policy's job
// (recoil.Policy.MaxServerWait), which stops the call and reports the wait
// rather than shortening it.
const MaxHeaderWait = 24 * time.Hour

// Header names, in the canonical form http.Header stores them in.
const (
	hdrRetryAfterMs = "Retry-After-Ms"
	hdrRetryAfter   = "Retry-After"
)

// resetHeader pairs a provider's rate-limit reset header with the header that
// says how much of that limit remains.
type resetHeader struct{ reset, remaining string }

// anthropicResets are Anthropic's reset headers: the RFC 3339 instant at which
// each limit is fully replenished.
var anthropicResets = [...]resetHeader{
	{"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Requests-Remaining"},
	{"Anthropic-Ratelimit-Tokens-Reset", "Anthropic-Ratelimit-Tokens-Remaining"},
	{"Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Input-Tokens-Remaining"},
	{"Anthropic-Ratelimit-Output-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Remaining"},
}

// openAIResets are OpenAI's reset headers: the time until each limit resets,
// as a Go-style duration ("1s", "6m0s", "20ms"; OpenAI's rate-limit guide).
var openAIResets = [...]resetHeader{
	{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Remaining-Requests"},
	{"X-Ratelimit-Reset-Tokens", "X-Ratelimit-Remaining-Tokens"},
}

// ServerWait returns the wait a response's headers direct before the request
// is tried again, and whether they direct one. The first form present with a
// valid value wins, in this order:
//
//  1. retry-after-ms: milliseconds, fractions allowed ("1500", "1500.5");
//     sent by OpenAI and Azure OpenAI as a finer Retry-After;
//  2. Retry-After (RFC 9110 §10.2.3): delta-seconds, fractions allowed
//     ("30", "1.5"), or an HTTP-date in any of the three forms
//     http.ParseTime accepts, measured from now;
//  3. Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
//     output-tokens}-reset: RFC 3339 instants, measured from now;
//  4. OpenAI's x-ratelimit-reset-{requests,tokens}: durations such as "1s",
//     "6m0s", "20ms" (time.ParseDuration).
//
// Within each family of reset headers (3 and 4) one limit's reset is chosen:
// if any of the family's remaining headers is present, the longest valid
// reset among the limits whose remaining header is "0" — the limits actually
// exhausted; none exhausted means the family directs no wait. If no remaining
// header is present, the longest valid reset. A reset header is a time to a
// full window, so it is only evidence for a limit that has run out.
//
// A value that is empty, blank, malformed, negative, not finite ("NaN",
// "inf", "1e400"), in the past, too large to represent, or longer than
// MaxHeaderWait is treated as absent and the next form is tried. Zero is a
// valid wait ("retry now"). A wait is never shortened or clamped here.
//
// Header names are looked up in canonical form, as http.Header.Get does and
// as a received response's header stores them. ServerWait allocates nothing
// on the numeric and date forms. It is safe for concurrent use.
func ServerWait(h http.Header, now time.Time) (time.Duration, bool) {
	if len(h) == 0 {
		return 0, false
	}
	if d, ok := parseDecimal(get(h, hdrRetryAfterMs), time.Millisecond); ok {
		return d, true
	}
	if d, ok := parseRetryAfter(get(h, hdrRetryAfter), now); ok {
		return d, true
	}
	if d, ok := familyWait(h, anthropicResets[:], now, parseResetInstant); ok {
		return d, true
	}
	return familyWait(h, openAIResets[:], now, parseResetDuration)
}

// get is h.Get for a key already in canonical form: it skips the
// canonicalization, which costs more than the map lookup.
func get(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// familyWait applies ServerWait's rule for one provider's reset headers.
func familyWait(h http.Header, family []resetHeader, now time.Time, parse func(string, time.Time) (time.Duration, bool)) (time.Duration, bool) {
	anyRemaining := false
	for _, f := range family {
		if trimOWS(get(h, f.remaining)) != "" {
			anyRemaining = true
			break
		}
	}
	var best time.Duration
	found := false
	for _, f := range family {
		if anyRemaining && trimOWS(get(h, f.remaining)) != "0" {
			continue
		}
		if d, ok := parse(get(h, f.reset), now); ok && (!found || d > best) {
			best, found = d, true
		}
	}
	return best, found
}

// parseRetryAfter parses a Retry-After value: delta-seconds (with an optional
// fraction) or an HTTP-date, which must not be in the past.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = trimOWS(v)
	if v == "" {
		return 0, false
	}
	if c := v[0]; c == '.' || '0' <= c && c <= '9' {
		return parseDecimal(v, time.Second)
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return untilWithin(t, now)
}

// parseResetInstant parses an RFC 3339 reset instant (Anthropic).
func parseResetInstant(v string, now time.Time) (time.Duration, bool) {
	v = trimOWS(v)
	if v == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return 0, false
	}
	return untilWithin(t, now)
}

// parseResetDuration parses a Go-style duration to a reset (OpenAI). A sign
// is refused: OpenAI sends none, and "-0" would otherwise pass as zero.
func parseResetDuration(v string, _ time.Time) (time.Duration, bool) {
	v = trimOWS(v)
	if v == "" || v[0] == '-' || v[0] == '+' {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > MaxHeaderWait {
		return 0, false
	}
	return d, true
}

// untilWithin returns the time from now to t if it is neither past nor
// beyond MaxHeaderWait.
func untilWithin(t, now time.Time) (time.Duration, bool) {
	d := t.Sub(now) // saturates rather than overflows
	if d < 0 || d > MaxHeaderWait {
		return 0, false
	}
	return d, true
}

// parseDecimal parses an unsigned decimal number of units — digits with an
// optional fraction ("1500", "1.5", ".5", "2.") — exactly, in integer
// arithmetic: no exponent, sign, "inf" or "NaN" can get through, and nothing
// is rounded up or down beyond the nanosecond. Values above MaxHeaderWait are
// rejected before they can overflow.
func parseDecimal(v string, unit time.Duration) (time.Duration, bool) {
	v = trimOWS(v)
	maxWhole := int64(MaxHeaderWait / unit)
	var whole int64
	digits := 0
	i := 0
	for ; i < len(v) && '0' <= v[i] && v[i] <= '9'; i++ {
		whole = whole*10 + int64(v[i]-'0')
		if whole > maxWhole {
			return 0, false
		}
		digits++
	}
	var frac time.Duration
	if i < len(v) && v[i] == '.' {
		i++
		scale := unit / 10
		for ; i < len(v) && '0' <= v[i] && v[i] <= '9'; i++ {
			frac += time.Duration(v[i]-'0') * scale // digits past the nanosecond add nothing
			scale /= 10
			digits++
		}
	}
	if digits == 0 || i != len(v) {
		return 0, false
	}
	d := time.Duration(whole)*unit + frac
	if d > MaxHeaderWait {
		return 0, false
	}
	return d, true
}

// trimOWS trims the optional whitespace (spaces and tabs) RFC 9110 allows
// around a field value.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
