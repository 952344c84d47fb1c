package recoilgrpc

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// PushbackKey is the trailer in which a server tells a retrying client how
// long to wait, in milliseconds, before its next attempt (gRFC A6,
// "Pushback"): a non-negative integer is a wait; a negative or malformed
// value, or more than one value, means "do not retry".
const PushbackKey = "grpc-retry-pushback-ms"

// PreviousAttemptsKey is the request metadata that carries the number of
// attempts made before this one (gRFC A6): absent on a first attempt, 1 on
// the first retry. The client interceptors send it on every retry; the
// server interceptors read it when recoil-attempt is absent.
const PreviousAttemptsKey = "grpc-previous-rpc-attempts"

// Verdict codes the classification gives, for recoil.Verdict.Code. Those
// a Fallback moves on from carry the code recoil.DefaultFallbackRule
// reads for the same meaning in HTTP (not_found, unauthorized, forbidden,
// too_large); FallbackRule reads CodeUnavailable and CodeResourceExhausted
// besides. A status with a google.rpc.ErrorInfo detail carries its reason
// instead, except where the status says more (NOT_FOUND, UNAUTHENTICATED,
// PERMISSION_DENIED, UNAVAILABLE): see Classify.
const (
	// CodeDoNotRetry: the server said not to retry (a negative or
	// malformed pushback, or recoil-retry: no).
	CodeDoNotRetry = "do_not_retry"
	// CodeResourceExhausted: RESOURCE_EXHAUSTED without pushback or
	// RetryInfo, a quota that waiting does not refill. It is not one of
	// DefaultFallbackRule's codes — a rate limit without pushback may lift
	// in a minute, and a target kept out until Restore for it would be
	// lost to every later call — so that rule stops on it; FallbackRule
	// moves on and cools the target for the Fallback's cooldown. A server
	// that knows the quota is spent says so with an ErrorInfo reason such
	// as "insufficient_quota", which DefaultFallbackRule keeps out until
	// Restore.
	CodeResourceExhausted = "resource_exhausted"
	// CodeNotFound: NOT_FOUND, as the HTTP table's 404: a Fallback moves
	// on, and passes the target over for recoil.RetiredCooldown.
	CodeNotFound = "not_found"
	// CodeUnauthenticated: UNAUTHENTICATED, as the HTTP table's 401: the
	// credentials were refused; a Fallback moves on and keeps the target
	// out until Restore.
	CodeUnauthenticated = "unauthorized"
	// CodePermissionDenied: PERMISSION_DENIED, as the HTTP table's 403;
	// a Fallback moves on and keeps the target out until Restore.
	CodePermissionDenied = "forbidden"
	// CodeTooLarge: RESOURCE_EXHAUSTED for a message over a size limit
	// (grpc-go's "larger than max"), as the HTTP table's 413: permanent
	// whatever the retryable set, since the same message is as large again;
	// a Fallback moves it to a target declaring a larger MaxContext.
	CodeTooLarge = "too_large"
	// CodeUnavailable: UNAVAILABLE, gRPC's equivalent of HTTP 503 (a
	// channel that cannot connect, a server draining or shedding load):
	// retryable in the default set; FallbackRule moves on from it.
	CodeUnavailable = "unavailable"
	// CodeNotReplayable: a stream whose sent messages cannot be replayed.
	CodeNotReplayable = "not_replayable"
)

// StatusError is the error an attempt fails with when the server answered
// with a status other than OK (or the attempt ran out of its time): the
// status, and what the response said about retrying. errors.As finds it
// inside the *recoil.Error a call gives up with, and status.FromError reads
// its status through both. A StatusError is not modified after it is
// returned; it is safe to read from several goroutines.
type StatusError struct {
	// Status is the status the attempt ended with.
	Status *status.Status
	// Pushback is the wait the server asked for with PushbackKey;
	// meaningful only if HasPushback.
	Pushback time.Duration
	// HasPushback reports a valid, non-negative pushback.
	HasPushback bool
	// NoRetry reports that the server asked not to be retried: a negative
	// or malformed pushback, more than one pushback value, or recoil-retry: no.
	NoRetry bool
	// NoRetryReason says which, when NoRetry is set.
	NoRetryReason string
	// AttemptTimeout reports that the attempt was cut off by the retry
	// loop — the policy's AttemptTimeout, or its Timeout — not by the
	// caller or the server.
	AttemptTimeout bool
	// Trailer is the attempt's trailer metadata, nil if none arrived.
	Trailer metadata.MD
}

// Error returns the status as grpc-go formats it.
func (e *StatusError) Error() string { return e.Status.Err().Error() }

// GRPCStatus returns Status, so status.FromError and status.Code read it.
func (e *StatusError) GRPCStatus() *status.Status { return e.Status }

// statusError makes the StatusError for an attempt that failed with err (a
// status error, or a context error grpc-go did not convert), reading the
// pushback and recoil-retry from trailer. It returns nil for an error that
// carries no gRPC status, which the built-in rules then classify.
func statusError(err error, trailer metadata.MD, back hop.Response) *StatusError {
	st, ok := status.FromError(err)
	if !ok {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			st = status.New(codes.DeadlineExceeded, err.Error())
		case errors.Is(err, context.Canceled):
			st = status.New(codes.Canceled, err.Error())
		default:
			return nil
		}
	}
	e := &StatusError{Status: st, Trailer: trailer}
	e.Pushback, e.HasPushback, e.NoRetryReason = ParsePushback(trailer[PushbackKey])
	e.NoRetry = e.NoRetryReason != ""
	if back.NoRetry && !e.NoRetry {
		e.NoRetry, e.NoRetryReason = true, "the server said not to retry (recoil-retry: no)"
	}
	return e
}

// ParsePushback reads the values of PushbackKey as gRFC A6 and grpc-go do:
// no value is no pushback; one value that strconv.Atoi reads as a
// non-negative integer is a wait of that many milliseconds (clamped to
// the largest time.Duration); anything else — a negative or malformed
// value, or more than one value — means the server asked not to be
// retried, and stop says why.
func ParsePushback(values []string) (wait time.Duration, ok bool, stop string) {
	switch len(values) {
	case 0:
		return 0, false, ""
	case 1:
	default:
		return 0, false, "the server sent " + strconv.Itoa(len(values)) + " pushback values (" + PushbackKey + "), which means do not retry"
	}
	v := values[0]
	ms, err := strconv.Atoi(v)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && len(v) > 0 && v[0] != '-':
		ms = math.MaxInt64 / int(time.Millisecond)
	case err != nil:
		return 0, false, "malformed pushback " + quote(v) + " (" + PushbackKey + "), which means do not retry"
	case ms < 0:
		return 0, false, "the server's pushback was negative (" + PushbackKey + ": " + quote(v) + "): do not retry"
	}
	return time.Duration(min(ms, math.MaxInt64/int(time.Millisecond))) * time.Millisecond, true, ""
}

// quote quotes an outside value for a message, shortened if long.
func quote(v string) string {
	const most = 32
	if len(v) > most {
		return strconv.Quote(v[:most]) + "…"
	}
	return strconv.Quote(v)
}

// details returns the delay of the first valid google.rpc.RetryInfo
// detail in st, and the reason of its first google.rpc.ErrorInfo detail.
// A RetryInfo whose delay is missing, invalid or negative is ignored, as
// though absent.
func details(st *status.Status) (delay time.Duration, ok bool, reason string) {
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			rd := d.GetRetryDelay()
			if ok || rd == nil || rd.CheckValid() != nil || rd.AsDuration() < 0 {
				continue
			}
			delay, ok = rd.AsDuration(), true
		case *errdetails.ErrorInfo:
			if reason == "" {
				reason = d.GetReason()
			}
		}
	}
	return delay, ok, reason
}

// tooLarge reports whether a RESOURCE_EXHAUSTED message is about a
// message over a size limit: grpc-go's "larger than max", grpc-java's
// "exceeds maximum size".
func tooLarge(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "larger than max") || strings.Contains(m, "exceeds maximum size")
}

// DefaultRetryable is the retryable set of a Client whose Retryable field
// is nil: UNAVAILABLE alone (gRFC A6 retries only the codes a service
// config names; UNAVAILABLE is the one that means "try again").
func DefaultRetryable() []codes.Code { return []codes.Code{codes.Unavailable} }

// Classify is the package's classification of an attempt's error, with
// retryable the status codes worth another attempt (nil means
// DefaultRetryable). It finds a *StatusError or a gRPC status in err and
// applies, in order:
//
//   - a server that asked not to be retried (a negative or malformed
//     pushback, several pushback values, recoil-retry: no) is obeyed:
//     permanent, Code CodeDoNotRetry (gRFC A6);
//   - an attempt cut off by the policy's AttemptTimeout (or Timeout) is
//     transient, with Timeout set;
//   - RESOURCE_EXHAUSTED for a message over a size limit is permanent,
//     Code CodeTooLarge: the same message is too large again;
//   - the server's wait is the pushback, else a google.rpc.RetryInfo
//     detail's retry_delay; it is never shortened;
//   - a code in retryable is transient (RESOURCE_EXHAUSTED there is
//     throttled), with the server's wait;
//   - RESOURCE_EXHAUSTED outside it is throttled when the server sent a
//     wait, and otherwise permanent (Code CodeResourceExhausted): a quota
//     does not refill by waiting;
//   - every other code is permanent, as gRFC A6 retries no code its policy
//     does not name. A CANCELED or DEADLINE_EXCEEDED from the caller's own
//     context never gets here: the loop stops for the caller first.
//
// The verdict's Code says what a Fallback needs to know, as the HTTP
// table's does:
//
//	status                         Code                under DefaultFallbackRule
//	NOT_FOUND                      not_found           move; pass over for RetiredCooldown
//	UNAUTHENTICATED                unauthorized        move; out until Restore
//	PERMISSION_DENIED              forbidden           move; out until Restore
//	RESOURCE_EXHAUSTED, too large  too_large           move to a longer MaxContext
//	RESOURCE_EXHAUSTED, a wait     ""                  move; cool (throttled)
//	RESOURCE_EXHAUSTED, no wait    resource_exhausted  stop (FallbackRule: move; cool)
//	UNAVAILABLE                    unavailable         retry in place (FallbackRule: move; cool)
//
// A status that carries a google.rpc.ErrorInfo detail — gRPC's way to give
// a provider's error code — has its reason as the Code instead, except for
// NOT_FOUND, UNAUTHENTICATED, PERMISSION_DENIED and UNAVAILABLE, whose
// status says more: RESOURCE_EXHAUSTED with the reason
// "insufficient_quota" is a spent quota, INVALID_ARGUMENT with
// "context_length_exceeded" a request too long for the target.
//
// An error with no gRPC status in it gets the zero Verdict: the built-in
// rules (recoil.Classify) decide.
func Classify(err error, retryable []codes.Code) recoil.Verdict {
	var se *StatusError
	if !errors.As(err, &se) {
		st, ok := status.FromError(err)
		if !ok || err == nil {
			return recoil.Verdict{}
		}
		se = &StatusError{Status: st}
	}
	return se.verdict(retryable)
}

func (e *StatusError) verdict(retryable []codes.Code) recoil.Verdict {
	code := e.Status.Code()
	name := code.String()
	switch {
	case code == codes.OK:
		return recoil.Verdict{}
	case e.NoRetry:
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: CodeDoNotRetry, Reason: name + ": " + e.NoRetryReason}
	case e.AttemptTimeout:
		return recoil.Verdict{Class: recoil.ClassTransient, Timeout: true, Reason: name + ": attempt timed out"}
	}
	wait, waited, reason := details(e.Status)
	if e.HasPushback {
		wait, waited = e.Pushback, true
	}
	v := e.class(code, name, wait, waited, retryable)
	switch code {
	case codes.NotFound:
		v.Code = CodeNotFound
	case codes.Unauthenticated:
		v.Code = CodeUnauthenticated
	case codes.PermissionDenied:
		v.Code = CodePermissionDenied
	case codes.Unavailable:
		v.Code = CodeUnavailable
	default:
		if reason != "" {
			v.Code = reason
		}
	}
	return v
}

// class is the verdict on a status code without a code of its own: its
// class, wait and reason.
func (e *StatusError) class(code codes.Code, name string, wait time.Duration, waited bool, retryable []codes.Code) recoil.Verdict {
	if code == codes.ResourceExhausted && tooLarge(e.Status.Message()) {
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: CodeTooLarge, Reason: name + ": a message over the size limit"}
	}
	if retryable == nil {
		retryable = defaultRetryable[:]
	}
	for _, c := range retryable {
		if c != code {
			continue
		}
		v := recoil.Verdict{Class: recoil.ClassTransient, Wait: wait, Reason: name + ": retryable"}
		if code == codes.ResourceExhausted {
			v.Class, v.Reason = recoil.ClassThrottled, name+": throttled"
		}
		if waited {
			v.Reason += ", the server asked to wait"
		}
		return v
	}
	switch {
	case code == codes.ResourceExhausted && waited:
		return recoil.Verdict{Class: recoil.ClassThrottled, Wait: wait, Reason: name + ": throttled, the server asked to wait"}
	case code == codes.ResourceExhausted:
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: CodeResourceExhausted,
			Reason: name + " without pushback or RetryInfo: a quota does not refill by waiting"}
	case code == codes.NotFound:
		return recoil.Verdict{Class: recoil.ClassPermanent, Reason: name + ": not found"}
	}
	return recoil.Verdict{Class: recoil.ClassPermanent, Reason: name + ": not in the retryable set"}
}

var defaultRetryable = [...]codes.Code{codes.Unavailable}
