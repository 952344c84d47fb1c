// Package breaker is a circuit breaker for recoil's retry loop.
//
// The rule, so that a retry loop does not take down your own service: when a
// dependency is down, stop calling it for a while and fail fast — the
// kindest thing you can do for it is stop sending it traffic. A Breaker does
// that, and then finds out when to start again:
//
//	closed ──(too many failures)──▶ open ──(OpenDuration passes)──▶ half-open
//	   ▲                              ▲                                 │
//	   │                              └──────(a probe fails)────────────┤
//	   └─────────────(SuccessThreshold probes succeed)──────────────────┘
//
// Closed, every attempt goes and its outcome is counted; the breaker trips
// when a failure brings the failures in a rolling Window (10 s) to
// FailureRate (default 80 %) of at least MinRequests outcomes (default 50),
// or when a run of failures is long for the volume the window holds (14 in
// a row with nothing else in it, 20 after 1,000 outcomes: DefaultRunMargin),
// or, if SlowCallRate is set, when slow calls reach their rate (see Slow
// calls). A fixed run (ConsecutiveFailures: 5, the usual "after N
// consecutive failures") is an explicit choice.
//
// The defaults tell a dependency that is down from one that fails at a rate
// a retry mostly recovers. Five failures in a row come every few hundred
// attempts at a 30 % random failure rate; a breaker that trips on them
// refuses calls of which 70 % would have been answered, and answers fewer
// calls than not retrying at all. The default trips leave any random
// failure rate up to 50 % alone (at 50 %, about one window in 2,000 trips)
// and cut off a dependency that is down within about 20 failures. Open, every attempt is refused
// for OpenDuration (default 30 s). Half-open, up to MaxProbes attempts go at
// once (default 1); SuccessThreshold successes (default 1) close the breaker
// and any failure opens it for a fresh period.
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
// # Slow calls
//
// A dependency that slows down is failing before it errs: calls that took
// 2 s take 20, callers time out, and their retries double the load on
// something already behind. Where the caller says slowness is failure, the
// breaker trips on it, as resilience4j's does on its slowCallRateThreshold:
// set SlowCallRate, and a closed breaker opens when, at a slow call, the
// rolling Window holds at least MinRequests outcomes and the slow calls
// among them are at least that fraction. It is the failure rate's window
// and volume, judged beside it: either rate trips.
//
// What is slow is said two ways. RecordLatencyAt reports an outcome with
// its latency, and an attempt slower than SlowCallThreshold (strictly) is
// a slow call whether it succeeded or failed; a recoil.Policy calls it for
// every attempt when its Breaker has it. RecordSlowAt reports that a call
// already recorded turned out slow in a way its latency could not show:
// recoilhttp.Transport's stream meter calls it for a stream whose first
// content came too late or whose content came too slowly, long after the
// attempt's outcome (the response headers) was recorded. It counts a slow
// call and no outcome. With SlowCallThreshold zero only such reports are
// slow.
//
// Half-open, a slow probe (or a slow report) opens the breaker again as a
// failed probe does: a dependency still slow has not recovered. Counts
// reports the slow calls in the window as SlowCalls.
//
//	b := breaker.Must(breaker.New(breaker.Settings{
//		SlowCallRate:      0.5,             // half the calls slow...
//		SlowCallThreshold: 5 * time.Second, // ...slower than 5 s...
//		MinRequests:       20,              // ...of at least 20 in 10 s: open
//	}))
//	start := time.Now()
//	err := call()
//	b.RecordLatencyAt(time.Time{}, outcome(err), time.Since(start))
//
// Slow calls are counted in a second ring of buckets beside the outcomes',
// written only for a slow call: an outcome that is not slow costs what it
// costs in a failure-rate window, and a breaker without a SlowCallRate has
// no such ring.
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
// A closed breaker with only a fixed run (ConsecutiveFailures above zero,
// no rate) never needs it, and neither does the default breaker while its
// window holds no failure (it counts successes only from a failure on, see
// Cost), so their healthy paths read no clock; a FailureRate or
// SlowCallRate set by hand counts every outcome and reads it; an open breaker reads it to see whether
// its period is over, and the rate window reads it to bucket each outcome.
//
// # Cost
//
// Closed with only a fixed run, AllowAt is one atomic load and
// RecordAt(Success) is one more, with no store unless a failure run must be
// ended, so cores calling a healthy breaker share its cache line read-only
// and do not slow each other down. Open, AllowAt is a clock read and two
// loads, with no lock. The lock is taken only to change state and in the
// half-open state. The default breaker (Settings that set no trip) counts
// a success only while its window holds a failure: a dependency that has
// not failed for a whole window costs one more load per outcome, no clock
// and no store; its rate and its run's volume then read the outcomes since
// the first failure. A window in use (the default trips since a failure, a
// FailureRate or a SlowCallRate) adds a clock read (for a zero now) and a
// CAS on a window bucket to every outcome, and a sum over the window to every failure
// (with a FailureRate, or in a run of more than DefaultRunMargin) and to
// every slow call,
// which costs one more CAS; the buckets are striped across cores so that
// concurrent callers rarely write the same cache line. Nothing allocates except the
// first queued state change when OnStateChange is set.
package breaker
