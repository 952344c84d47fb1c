package recoil

import (
	"context"
	"log/slog"
	"time"
)

// Summary is the one report of a logical call, given to Policy.Observe when
// the call ends: how many attempts, how long it waited, why it stopped, and
// the last failure in its own words — the validator's complaint about the
// exact field, not five copies of it (seed 000).
type Summary struct {
	// Attempts is the number of attempts made.
	Attempts int
	// Reason is why the call stopped; ReasonNone when it succeeded.
	Reason Reason
	// Waited is the total time spent waiting between attempts.
	Waited time.Duration
	// Elapsed is the call's duration, waits and attempts included.
	Elapsed time.Duration
	// Verdict is the last failure's classification (zero if none failed).
	Verdict Verdict
	// LastErr is the last failed attempt's error (nil if none failed).
	LastErr error
	// Err is what the call returned: nil on success.
	Err error
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
}

// SlogObserver returns an Observe function that writes each call's Summary as
// one log line to l (nil means nothing is written): at Debug for a first-try
// success, Info for a success after retries, Warn when the call gave up. The
// line's attributes are attempts, waited, elapsed, reason, class, why (the
// verdict's reason) and error (the last error's own message).
func SlogObserver(l *slog.Logger) func(Summary) {
	if l == nil {
		return func(Summary) {}
	}
	return func(s Summary) {
		level, msg := slog.LevelDebug, "call succeeded"
		switch {
		case s.Err != nil:
			level, msg = slog.LevelWarn, "call gave up"
		case s.Attempts > 1:
			level, msg = slog.LevelInfo, "call succeeded after retries"
		}
		ctx := context.Background()
		if !l.Enabled(ctx, level) {
			return
		}
		attrs := make([]slog.Attr, 0, 7)
		attrs = append(attrs, slog.Int("attempts", s.Attempts), slog.Duration("waited", s.Waited))
		if s.Elapsed > 0 {
			attrs = append(attrs, slog.Duration("elapsed", s.Elapsed))
		}
		if s.Reason != ReasonNone {
			attrs = append(attrs, slog.String("reason", s.Reason.String()))
		}
		if s.LastErr != nil {
			attrs = append(attrs,
				slog.String("class", s.Verdict.Class.String()),
				slog.String("why", s.Verdict.Reason),
				slog.String("error", s.LastErr.Error()))
		}
		l.LogAttrs(ctx, level, msg, attrs...)
	}
}
