// Package breaker is a circuit breaker for recoil's retry loop.
//
// The rule, so that a retry loop does not take down your own service: after
// N consecutive failures, stop calling for 30 seconds and fail fast — when a
// dependency is unhealthy, the kindest thing you can do is stop sending it
// traffic. A Breaker does that, and then finds out when to start again:
//
//	closed ──(too many failures)──▶ open ──(OpenDuration passes)──▶ half-open
//	   ▲                              ▲                                 │
//	   │                              └──────(a probe fails)────────────┤
//	   └─────────────(SuccessThreshold probes succeed)──────────────────┘
//
// Closed, every attempt goes and its outcome is counted; the breaker trips on
// ConsecutiveFailures failures in a row (default 5), or, if FailureRate is
// set, when a failure brings the failures in a rolling Window to that fraction
// of at least MinRequests outcomes. Open, every attempt is refused for OpenDuration
// (default 30 s). Half-open, up to MaxProbes attempts go at once (default 1);
// SuccessThreshold successes (default 1) close the breaker and any failure
// opens it for a fresh period.
//
// # Usage
//
// Ask AllowAt before each attempt and report its outcome with RecordAt; a
// recoil.Policy does both when its Breaker field is set. By hand:
//
//	b := breaker.Must(breaker.New(breaker.Settings{
//		OnStateChange: func(from, to breaker.State, at time.Time) {
//			log.Printf("breaker %s -> %s", from, to)
//		},
//	}))
//
//	if !b.Allow() {
//		return errCircuitOpen // fail fast
//	}
//	err := call()
//	switch {
//	case ctx.Err() != nil:
//		b.Record(breaker.Ignored) // says nothing about the dependency
//	case err != nil:
//		b.Record(breaker.Failure)
//	default:
//		b.Record(breaker.Success)
//	}
//
// Every admitted attempt must be reported, Ignored if need be: a half-open
// breaker holds a probe slot for it until then.
//
// New returns an error for Settings out of range (a *ConfigError wrapping
// ErrConfig, naming the field); Must turns it into a panic where the
// Settings are a literal. The zero Breaker needs no New at all.
//
// # Time
//
// Every method has a form taking now (AllowAt, RecordAt, StateAt, CountsAt),
// in the style of golang.org/x/time/rate, so simulations and tests can drive
// the breaker with explicit instants; the short forms pass the zero
// time.Time, which means "the current time: read the clock only if needed".
// A closed breaker without a FailureRate never needs it, so the healthy path
// reads no clock; an open breaker reads it to see whether its period is over,
// and the failure-rate window reads it to bucket each outcome.
//
// # Cost
//
// Closed with the consecutive trip, AllowAt is one atomic load and
// RecordAt(Success) is one more, with no store unless a failure run must be
// ended, so cores calling a healthy breaker share its cache line read-only
// and do not slow each other down. Open, AllowAt is a clock read and two
// loads, with no lock. The lock is taken only to change state and in the
// half-open state. A FailureRate adds a clock read (for a zero now) and a
// CAS on a window bucket to every outcome, and a sum over the window to
// every failure; the buckets are striped across cores so that concurrent
// callers rarely write the same cache line. Nothing allocates except the
// first queued state change when OnStateChange is set.
package breaker
