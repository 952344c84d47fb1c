package recoil

import (
	"context"
	"log/slog"
	"time"
)

// Summary is the one report of a logical call, given to Policy.Observe when
// the call ends: how many attempts, how long it waited, why it stopped, and
// the last failure in its own words — the validator's complaint about the
// exact field, not five copies of it (docs/why.md, section 1).
type Summary struct {
	// Attempts is the number of attempts made.
	Attempts int
	// Reason is why the call stopped; ReasonNone when it succeeded.
	Reason Reason
	// Waited is the total time spent waiting between attempts.
	Waited time.Duration
	// RefusedWait is the wait the call stopped over (ReasonWaitTooLong, or
	// ReasonDeadline when the wait did not fit); zero otherwise.
	RefusedWait time.Duration
	// Elapsed is the call's duration, waits and attempts included.
	Elapsed time.Duration
	// Verdict is the last failure's classification (zero if none failed).
	Verdict Verdict
	// LastErr is the last failed attempt's error (nil if none failed).
	LastErr error
	// Err is what the call returned: nil on success.
	Err error
	// Targets, for a call under a policy with a Fallback, is each target
	// the call went to or passed over, in order, with its attempts and
	// why the call left it; nil otherwise.
	Targets []TargetReport
	// Hedges is the number of hedges the call started (under a Hedge);
	// they are among Attempts.
	Hedges int
	// RefusedHedges is the number of hedges the budget, the limiter or the
	// breaker refused.
	RefusedHedges int
	// Wasted is the number of attempts abandoned in flight when another
	// answered first: work the dependency may have done for nobody.
	Wasted int
}

// AttemptEvent reports one attempt to Policy.OnAttempt.
type AttemptEvent struct {
	// Attempt is the attempt's number; 1 is the first.
	Attempt int
	// Err is the attempt's error; nil when it succeeded.
	Err error
	// Verdict classifies Err.
	Verdict Verdict
	// Retry reports whether another attempt follows.
	Retry bool
	// Wait is the wait before the next attempt when Retry is true, or the
	// refused wait when the call stopped over one.
	Wait time.Duration
	// Reason is why the call stops after this attempt, if it does.
	Reason Reason
	// Target is the name of the Fallback target the attempt went to; ""
	// under a policy without one.
	Target string
	// Left, when the call leaves Target for the next one after this
	// attempt, says why ("model not found", "overloaded"); "" otherwise.
	Left string
}

// SlogObserver returns an Observe function that writes each call's Summary as
// one log line to l (nil means nothing is written): at Level and with
// Message, and Attrs as its attributes, under the caller's context so a
// handler that reads trace ids from it finds them.
func SlogObserver(l *slog.Logger) func(context.Context, Summary) {
	if l == nil {
		return func(context.Context, Summary) {}
	}
	return func(ctx context.Context, s Summary) {
		if level := s.Level(); l.Enabled(ctx, level) {
			l.LogAttrs(ctx, level, s.Message(), s.Attrs()...)
		}
	}
}

// Level is the level a log line for s deserves: Debug for a first-try
// success, Info for a success after retries, Warn when the call gave up.
func (s Summary) Level() slog.Level {
	switch {
	case s.Err != nil:
		return slog.LevelWarn
	case s.Attempts > 1:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// Message is a log message for s: "call succeeded", "call succeeded after
// retries" or "call gave up".
func (s Summary) Message() string {
	switch {
	case s.Err != nil:
		return "call gave up"
	case s.Attempts > 1:
		return "call succeeded after retries"
	}
	return "call succeeded"
}

// Attrs returns s as log attributes: attempts, waited, elapsed (when
// known), reason (when the call stopped), refused_wait (when it stopped
// over a wait), and for the last failure its class, why (the verdict's
// reason), code (when set) and error (its own message); and, for a call
// under a Fallback, targets: each target in order with its attempts and
// why it was left ("a:1 (model not found) b:1"); and, for a call that
// hedged, hedges, refused_hedges and wasted.
func (s Summary) Attrs() []slog.Attr {
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs, slog.Int("attempts", s.Attempts), slog.Duration("waited", s.Waited))
	if s.Elapsed > 0 {
		attrs = append(attrs, slog.Duration("elapsed", s.Elapsed))
	}
	if s.Reason != ReasonNone {
		attrs = append(attrs, slog.String("reason", s.Reason.String()))
	}
	if s.RefusedWait > 0 {
		attrs = append(attrs, slog.Duration("refused_wait", s.RefusedWait))
	}
	if s.LastErr != nil {
		attrs = append(attrs, slog.String("class", s.Verdict.Class.String()), slog.String("why", s.Verdict.Reason))
		if s.Verdict.Code != "" {
			attrs = append(attrs, slog.String("code", s.Verdict.Code))
		}
		attrs = append(attrs, slog.String("error", s.LastErr.Error()))
	}
	if len(s.Targets) > 0 {
		attrs = append(attrs, slog.String("targets", string(appendTargets(nil, s.Targets))))
	}
	if s.Hedges > 0 || s.RefusedHedges > 0 {
		attrs = append(attrs, slog.Int("hedges", s.Hedges), slog.Int("refused_hedges", s.RefusedHedges), slog.Int("wasted", s.Wasted))
	}
	return attrs
}
