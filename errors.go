package recoil

import (
	"errors"
	"strconv"
	"time"
)

// Reason is why a call stopped retrying.
type Reason uint8

const (
	// ReasonNone: the call has not stopped (the decision says retry), or it
	// succeeded.
	ReasonNone Reason = iota
	// ReasonAttempts: the policy's MaxAttempts were all used.
	ReasonAttempts
	// ReasonPermanent: the failure was classified permanent; retrying cannot help.
	ReasonPermanent
	// ReasonDeadline: the next wait, plus a minimal attempt, could not finish
	// before the caller's deadline, or the policy's own Timeout ran out.
	ReasonDeadline
	// ReasonBudget: the retry budget refused the retry (or, for a budget that
	// throttles first attempts, the call).
	ReasonBudget
	// ReasonCircuitOpen: the circuit breaker refused the attempt.
	ReasonCircuitOpen
	// ReasonWaitTooLong: the server asked for a wait longer than the policy's
	// MaxServerWait. The requested wait is in Error.RefusedWait, so a
	// scheduler above can requeue the work for later.
	ReasonWaitTooLong
	// ReasonLimit: the concurrency limiter shed the attempt.
	ReasonLimit
	// ReasonCanceled: the caller's context was cancelled. Do and Get return
	// context.Cause(ctx) itself in that case; the reason appears in the
	// Summary an observer receives.
	ReasonCanceled
	// ReasonNoTarget: the policy's Fallback had no target the call could
	// use — each was left, out until restored, cooling down with nothing
	// else to try, refused by its allowance, or too small for the request
	// — or the driver cannot send an attempt to a target. Error.Targets
	// says why each was passed over.
	ReasonNoTarget
)

var reasonNames = [...]string{
	"none", "attempts exhausted", "permanent error", "deadline", "retry budget exhausted",
	"circuit open", "server wait too long", "concurrency limit", "canceled", "no target",
}

// String returns the reason in a few words.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// Sentinel errors, one per stop reason. errors.Is(err, ErrDeadline) reports
// whether a call stopped for that reason; the *Error that carries it also
// unwraps to the last underlying error.
var (
	ErrAttemptsExhausted = errors.New("recoil: attempts exhausted")
	ErrPermanent         = errors.New("recoil: permanent error")
	ErrDeadline          = errors.New("recoil: deadline too close to retry")
	ErrBudget            = errors.New("recoil: retry budget exhausted")
	ErrCircuitOpen       = errors.New("recoil: circuit open")
	ErrWaitTooLong       = errors.New("recoil: server wait too long")
	ErrLimit             = errors.New("recoil: concurrency limit reached")
	ErrNoTarget          = errors.New("recoil: no fallback target available")
)

// ErrAbandoned is the error OnAttempt reports for an attempt a hedged call
// gave up in flight because another attempt answered first or decided the
// call: its Verdict's class is ClassCanceled and its Reason says which.
var ErrAbandoned = errors.New("recoil: attempt abandoned in flight")

var sentinels = [...]error{
	ReasonAttempts:    ErrAttemptsExhausted,
	ReasonPermanent:   ErrPermanent,
	ReasonDeadline:    ErrDeadline,
	ReasonBudget:      ErrBudget,
	ReasonCircuitOpen: ErrCircuitOpen,
	ReasonWaitTooLong: ErrWaitTooLong,
	ReasonLimit:       ErrLimit,
	ReasonNoTarget:    ErrNoTarget,
}

// Sentinel returns the sentinel error for r, or nil for ReasonNone and
// ReasonCanceled.
func (r Reason) Sentinel() error {
	if int(r) < len(sentinels) {
		return sentinels[r]
	}
	return nil
}

// Error is what a call returns when it gives up: how many attempts it made,
// why it stopped, how long it spent waiting between attempts, and the last
// underlying error (nil when it stopped before any attempt, as a budget or
// breaker refusing the first one does). errors.Is matches the sentinel for
// Reason; errors.Is and errors.As also reach Err and whatever it wraps.
type Error struct {
	// Attempts is the number of attempts made.
	Attempts int
	// Reason is why the call stopped.
	Reason Reason
	// Waited is the total time spent waiting between attempts.
	Waited time.Duration
	// RefusedWait is the wait the call stopped over, when it stopped because
	// a wait was too long for the deadline or for MaxServerWait; zero
	// otherwise. A scheduler that must requeue the work learns from it when.
	RefusedWait time.Duration
	// Verdict is the last failure's classification.
	Verdict Verdict
	// Err is the last attempt's error.
	Err error
	// Targets, for a call under a policy with a Fallback, is each target
	// the call went to or passed over, in order, with its attempts and
	// why the call left it; nil otherwise.
	Targets []TargetReport
}

// Error formats the error as one line: why it stopped, after how many
// attempts, and the last error in its own words.
func (e *Error) Error() string {
	b := make([]byte, 0, 96)
	b = append(b, "recoil: "...)
	b = append(b, e.Reason.String()...)
	b = append(b, " after "...)
	b = strconv.AppendInt(b, int64(e.Attempts), 10)
	if e.Attempts == 1 {
		b = append(b, " attempt"...)
	} else {
		b = append(b, " attempts"...)
	}
	if e.Waited > 0 {
		b = append(b, ", waited "...)
		b = append(b, e.Waited.String()...)
	}
	if e.RefusedWait > 0 {
		b = append(b, ", refused wait "...)
		b = append(b, e.RefusedWait.String()...)
	}
	if len(e.Targets) > 0 {
		b = append(b, ", targets "...)
		b = appendTargets(b, e.Targets)
	}
	if e.Err != nil {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Is reports whether target is the sentinel for e.Reason.
func (e *Error) Is(target error) bool {
	s := e.Reason.Sentinel()
	return s != nil && target == s
}

// Unwrap returns the last underlying error.
func (e *Error) Unwrap() error { return e.Err }
