package recoilgrpc

import (
	"context"
	"errors"
	"math"
	"strconv"
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

// Verdict codes the classification gives, for recoil.Verdict.Code.
const (
	// CodeDoNotRetry: the server said not to retry (a negative or
	// malformed pushback, or recoil-retry: no).
	CodeDoNotRetry = "do_not_retry"
	// CodeResourceExhausted: RESOURCE_EXHAUSTED without pushback or
	// RetryInfo, a quota that waiting does not refill.
	CodeResourceExhausted = "resource_exhausted"
	// CodeNotFound: NOT_FOUND, as the HTTP table's 404.
	CodeNotFound = "not_found"
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

// retryInfo returns the delay of the first valid google.rpc.RetryInfo
// detail in st. A detail whose delay is missing, invalid or negative is
// ignored, as though absent.
func retryInfo(st *status.Status) (time.Duration, bool) {
	for _, d := range st.Details() {
		ri, ok := d.(*errdetails.RetryInfo)
		if !ok {
			continue
		}
		rd := ri.GetRetryDelay()
		if rd == nil || rd.CheckValid() != nil || rd.AsDuration() < 0 {
			continue
		}
		return rd.AsDuration(), true
	}
	return 0, false
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
//   - the server's wait is the pushback, else a google.rpc.RetryInfo
//     detail's retry_delay; it is never shortened;
//   - a code in retryable is transient (RESOURCE_EXHAUSTED there is
//     throttled), with the server's wait;
//   - RESOURCE_EXHAUSTED outside it is throttled when the server sent a
//     wait, and otherwise permanent (Code CodeResourceExhausted): a quota
//     does not refill by waiting;
//   - every other code is permanent (NOT_FOUND with Code CodeNotFound), as
//     gRFC A6 retries no code its policy does not name. A CANCELED or
//     DEADLINE_EXCEEDED from the caller's own context never gets here: the
//     loop stops for the caller first.
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
	wait, waited := e.Pushback, e.HasPushback
	if !waited {
		wait, waited = retryInfo(e.Status)
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
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: CodeNotFound, Reason: name + ": not found"}
	}
	return recoil.Verdict{Class: recoil.ClassPermanent, Reason: name + ": not in the retryable set"}
}

var defaultRetryable = [...]codes.Code{codes.Unavailable}
