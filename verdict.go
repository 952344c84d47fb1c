package recoil

import (
	"context"
	"strconv"
	"time"
)

// Class is what kind of failure an attempt ended in, which decides whether
// doing it again can help — the only useful question about a failure.
type Class uint8

const (
	// ClassUnknown is the zero Class: a classifier with no opinion. The
	// policy's Unknown class applies.
	ClassUnknown Class = iota
	// ClassTransient failures may succeed if tried again: timeouts, dropped
	// connections, 500/502/504.
	ClassTransient
	// ClassThrottled failures are the caller being over an allowance (429).
	// Retry only after waiting, as long as the server asked (Verdict.Wait).
	ClassThrottled
	// ClassOverloaded failures are the dependency at capacity (503, 529).
	// Retry with a longer wait than a transient failure, and count them
	// toward a breaker.
	ClassOverloaded
	// ClassPermanent failures will not change on a second try: a validator's
	// 400, a revoked key, a model that no longer exists. The right number of
	// retries is zero.
	ClassPermanent
	// ClassCanceled is an attempt abandoned by cancellation. It is never
	// retried, and budgets and breakers count it for nothing.
	ClassCanceled
)

var classNames = [...]string{"unknown", "transient", "throttled", "overloaded", "permanent", "canceled"}

// String returns the class's lower-case name.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Retryable reports whether a failure of this class is worth another attempt.
func (c Class) Retryable() bool {
	return c == ClassTransient || c == ClassThrottled || c == ClassOverloaded
}

// Verdict says what a failure is and why: its class, a wait the server asked
// for, and a short human reason ("validator rejected field tools[0].input_schema",
// "non-JSON 400 from an intermediary"). The zero Verdict is "no opinion".
type Verdict struct {
	// Class is what kind of failure this is.
	Class Class
	// Wait is a wait the server directed (Retry-After and its relatives); zero
	// when the server said nothing. A server-directed wait is never shortened.
	Wait time.Duration
	// Timeout reports that the attempt timed out. Budgets that charge
	// timeouts more (AWS standard mode) read it.
	Timeout bool
	// MayHaveExecuted reports that the attempt may have taken effect at the
	// dependency although it failed (a connection reset after the request
	// was written): retrying a non-idempotent call could do it twice.
	MayHaveExecuted bool
	// Code is a short machine-readable tag for the diagnosis, such as
	// "insufficient_quota", "not_found" or "non_json_400"; empty when there
	// is none. Callers branch on it (a "not_found" model: fall back to
	// another) and metrics label by it.
	Code string
	// Reason is a short, human diagnosis.
	Reason string
}

// String formats the verdict as "class: reason (wait 2s)".
func (v Verdict) String() string {
	s := v.Class.String()
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	if v.Wait > 0 {
		s += " (wait " + v.Wait.String() + ")"
	}
	return s
}

// A Classifier turns an attempt's error into a Verdict. Returning the zero
// Verdict means "no opinion": the built-in rules (Classify) then apply. A
// Classifier must be safe for concurrent use.
type Classifier func(err error) Verdict

// verdicter is implemented by errors that carry their own verdict: the ones
// Mark, Permanent, RetryAfter, Transient and Overloaded return, and any
// caller type that wants to classify itself.
type verdicter interface {
	error
	RecoilVerdict() Verdict
}

// marked is an error with a verdict the caller attached.
type marked struct {
	err error
	v   Verdict
}

func (m *marked) Error() string {
	if m.err == nil {
		return m.v.String()
	}
	return m.err.Error()
}
func (m *marked) Unwrap() error          { return m.err }
func (m *marked) RecoilVerdict() Verdict { return m.v }

// Mark attaches a verdict to err. The retry loop uses it in preference to any
// classifier; errors.Is and errors.As still reach err. Mark(nil, …) is nil.
func Mark(err error, v Verdict) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, v: v}
}

// Permanent marks err as not worth retrying: the call stops after this
// attempt. Permanent(nil) is nil.
func Permanent(err error) error {
	return Mark(err, Verdict{Class: ClassPermanent, Reason: "marked permanent"})
}

// Transient marks err as worth retrying with the policy's backoff.
func Transient(err error) error {
	return Mark(err, Verdict{Class: ClassTransient, Reason: "marked transient"})
}

// Overloaded marks err as the dependency being at capacity: it is retried
// with the policy's longer overload backoff, and counts toward a breaker.
func Overloaded(err error) error {
	return Mark(err, Verdict{Class: ClassOverloaded, Reason: "marked overloaded"})
}

// RetryAfter marks err as throttled with a server-directed wait d: the next
// attempt waits at least d, or the call stops and returns d in its *Error if d
// exceeds the policy's MaxServerWait or the time left before the deadline.
// The wait is never shortened; a random extra of up to a tenth of d (at most
// a second, and only what the deadline leaves) spreads callers told the same
// wait, so that they do not all return at the same instant. A negative d is
// treated as zero.
func RetryAfter(err error, d time.Duration) error {
	return Mark(err, Verdict{Class: ClassThrottled, Wait: max(d, 0), Reason: "server asked to wait"})
}

// VerdictOf returns the verdict attached to err or to any error it wraps
// (through Unwrap() error and Unwrap() []error, depth first), and whether one
// was found.
func VerdictOf(err error) (v Verdict, ok bool) {
	walk(err, func(e error) bool {
		if m, is := e.(verdicter); is {
			v, ok = m.RecoilVerdict(), true
		}
		return ok
	})
	return v, ok
}

// walk visits err and the errors it wraps, depth first, until visit returns
// true; it reports whether it did. Unlike errors.As it allocates nothing.
func walk(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, visit) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// Classify applies recoil's built-in rules to an attempt's error, in order:
//
//  1. a verdict attached with Mark (or by an error type with a
//     RecoilVerdict() Verdict method) wins;
//  2. context.Canceled is ClassCanceled: cancellation is never retried;
//  3. an error that reports an HTTP status — it, or an error it wraps, has a
//     StatusCode() int or HTTPStatusCode() int method, as the clients of
//     many APIs do — is classified by its status alone (StatusVerdict), the
//     table the HTTP Transport starts from, so a 400 inside an SDK's error is
//     not retried whichever driver runs the call;
//  4. context.DeadlineExceeded, or any error with Timeout() == true (net.Error),
//     is Transient with Timeout set — the attempt timed out, not the caller
//     (the loop checks the caller's own context before classifying);
//  5. anything else gets the class unknown.
func Classify(err error, unknown Class) (v Verdict) {
	classify(&v, err, unknown)
	return v
}

// classify is Classify writing the verdict into *v: the loop classifies
// into a Verdict of its own rather than copying one back up the calls.
func classify(v *Verdict, err error, unknown Class) {
	if m, ok := err.(*marked); ok {
		// Mark's own error, unwrapped: rule 1, without the walk (the
		// common case of a fallback move, a type check in place of an
		// interface assertion per error in the chain).
		*v = m.v
		return
	}
	// One walk down the chain finds what every rule needs; the rules then
	// apply in order, each over the whole chain.
	var (
		hasMark        bool
		canceled, late bool
		timeout        bool
		code           int
	)
	walk(err, func(e error) bool {
		if m, ok := e.(verdicter); ok {
			*v, hasMark = m.RecoilVerdict(), true
			return true // rule 1 wins over everything
		}
		switch e {
		case context.Canceled:
			canceled = true
		case context.DeadlineExceeded:
			late = true
		}
		if is, ok := e.(interface{ Is(error) bool }); ok {
			canceled = canceled || is.Is(context.Canceled)
			late = late || is.Is(context.DeadlineExceeded)
		}
		if code == 0 {
			switch s := e.(type) {
			case interface{ StatusCode() int }:
				code = s.StatusCode()
			case interface{ HTTPStatusCode() int }:
				code = s.HTTPStatusCode()
			}
		}
		if t, ok := e.(interface{ Timeout() bool }); ok && t.Timeout() {
			timeout = true
		}
		return false
	})
	switch {
	case hasMark:
	case canceled:
		*v = Verdict{Class: ClassCanceled, Reason: "canceled"}
	case code >= 400 && code <= 999:
		*v = StatusVerdict(code)
	case late || timeout:
		*v = Verdict{Class: ClassTransient, Timeout: true, Reason: "attempt timed out"}
	default:
		*v = Verdict{Class: unknown, Reason: "unclassified error"}
	}
}

// StatusVerdict classifies an HTTP status by its code alone: the table the
// HTTP Transport refines with what the response's headers and body say
// (Retry-After, the provider's error type), and the one the built-in rules
// apply to any error that reports a status. Below 400 it returns the zero
// Verdict (not a failure). Otherwise:
//
//   - 408 is transient; 429 is throttled;
//   - 503 and 529 are overloaded: the dependency is at capacity;
//   - 501 and 505 are permanent: the server will not do this at all;
//   - every other 5xx is transient;
//   - every other 4xx — 400, 401, 403, 404, 409, 413, 422 — is permanent:
//     the request itself is refused, and a second try sends the same
//     request. Those a Fallback moves on from carry a Code saying why:
//     "not_found" (404: a retired model), "unauthorized" (401: a revoked
//     key), "payment_required" (402), "forbidden" (403) and "too_large"
//     (413: the request is too long for this target).
func StatusVerdict(code int) Verdict {
	s := "HTTP " + strconv.Itoa(code)
	switch {
	case code < 400:
		return Verdict{}
	case code == 408:
		return Verdict{Class: ClassTransient, Reason: s + ": request timeout"}
	case code == 429:
		return Verdict{Class: ClassThrottled, Reason: s + ": rate limited"}
	case code == 503 || code == 529:
		return Verdict{Class: ClassOverloaded, Reason: s + ": overloaded"}
	case code == 501 || code == 505:
		return Verdict{Class: ClassPermanent, Reason: s + ": not supported by the server"}
	case code >= 500:
		return Verdict{Class: ClassTransient, Reason: s + ": server error"}
	case code == 404:
		return Verdict{Class: ClassPermanent, Code: "not_found", Reason: s + ": not found"}
	case code == 401:
		return Verdict{Class: ClassPermanent, Code: "unauthorized", Reason: s + ": the credentials were refused"}
	case code == 402:
		return Verdict{Class: ClassPermanent, Code: "payment_required", Reason: s + ": payment required"}
	case code == 403:
		return Verdict{Class: ClassPermanent, Code: "forbidden", Reason: s + ": the credentials may not do this"}
	case code == 413:
		return Verdict{Class: ClassPermanent, Code: "too_large", Reason: s + ": the request is too large"}
	default:
		return Verdict{Class: ClassPermanent, Reason: s + ": the request was refused; the same request will be refused again"}
	}
}
