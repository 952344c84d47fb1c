package breaker

import (
	"errors"
	"math"
	"time"

	"github.com/recoil-go/recoil/internal/config"
)

// Defaults for the zero fields of Settings.
const (
	// DefaultFailureRate is the failure rate that trips a breaker whose
	// Settings set no trip: 80 % of at least DefaultMinRequests outcomes in
	// the window. A dependency failing at random at a rate a retry mostly
	// recovers (up to half its attempts) is left alone: over 50 outcomes,
	// a 50 % failure rate shows 80 % about once in 80,000 windows
	// (docs/why.md, "Do no harm").
	DefaultFailureRate = 0.8
	// DefaultRunMargin sets the run of failures that trips a breaker whose
	// ConsecutiveFailures is zero: a run at least DefaultRunMargin longer
	// than the bit length of the outcomes in the window (14 when the window
	// holds only the run, 20 at 1,000 outcomes). Scaled to the volume so, a
	// dependency failing half its attempts at random makes such a run in
	// about one window in 2,000 whatever its call rate, while one that went
	// down trips within about 20 failures, without waiting for the window's
	// older successes to age out.
	DefaultRunMargin = 10
	// DefaultOpenDuration is how long a tripped breaker fails fast before it
	// lets a probe through: "stop calling for 30 seconds".
	DefaultOpenDuration = 30 * time.Second
	// DefaultWindow is the span of the failure-rate window.
	DefaultWindow = 10 * time.Second
	// DefaultMinRequests is the volume the failure-rate window must hold
	// before its rate can trip the breaker: 50, enough that a rate short of
	// the threshold rarely shows above it by chance (resilience4j asks for
	// 100 calls by default).
	DefaultMinRequests = 50
	// DefaultMaxProbes is how many attempts a half-open breaker lets through
	// at once: one, so a dependency that is still down sees one request per
	// open period from this breaker.
	DefaultMaxProbes = 1
	// DefaultSuccessThreshold is how many probes must succeed to close a
	// half-open breaker: one. Closing early is cheap to undo (a few failures
	// trip it again); staying half-open keeps refusing healthy traffic.
	DefaultSuccessThreshold = 1
)

// Settings configures a Breaker. Every zero field means the documented
// default (sony/gobreaker's Settings convention), so Settings{} is the
// usual breaker: 80 % of at least 50 outcomes in 10 s failing, or a run of
// failures long for the volume (see DefaultRunMargin), opens it for 30
// seconds.
//
// The trips are ConsecutiveFailures, FailureRate and SlowCallRate. Settings
// that set none of them (ConsecutiveFailures ≤ 0, both rates zero) get the
// default failure rate, DefaultFailureRate; Settings that set one get the
// trips they set, and a run scaled to the volume unless
// ConsecutiveFailures is negative.
type Settings struct {
	// ConsecutiveFailures trips a closed breaker when this many failures
	// arrive in a row (Ignored outcomes neither extend nor break a run): a
	// fixed run, an explicit choice. A fixed run trips on a failure rate a
	// retry would mostly recover when the call rate is high (five in a row
	// at 30 % happens every few hundred attempts), so prefer the default.
	// Zero means a run scaled to the window's volume (DefaultRunMargin); a
	// negative value disables the run trip. New refuses a value above
	// math.MaxUint32.
	ConsecutiveFailures int

	// FailureRate trips a closed breaker when, at a recorded failure, the
	// rolling Window holds at least MinRequests outcomes and the failures
	// among them are at least this fraction (0.5 = 50 %, as resilience4j's
	// failureRateThreshold "equal or greater"). Only a failure is checked:
	// a success cannot raise the rate. Zero means DefaultFailureRate when
	// no other trip is set (ConsecutiveFailures ≤ 0 and SlowCallRate zero),
	// and no rate trip otherwise; New refuses a negative value, one above
	// 1, and NaN.
	//
	// A window (the rate trips and the scaled run) reads the clock on
	// every outcome (when given a zero now) and writes a counter, so it
	// costs more than a fixed run alone; see the package documentation.
	FailureRate float64
	// Window is the span of the failure-rate window; zero means
	// DefaultWindow. It is kept as ten buckets of Window/10; the oldest
	// bucket leaves the window whole, so the window covers between 0.9 and
	// 1 times Window. Unused by a breaker with only a fixed run. New
	// refuses a negative value.
	Window time.Duration
	// MinRequests is the number of Success and Failure outcomes the window
	// must hold before its rates (FailureRate, SlowCallRate) can trip the
	// breaker; zero means DefaultMinRequests. Below it no rate trips,
	// however bad. New refuses a negative value.
	MinRequests int

	// SlowCallRate trips a closed breaker when, at a recorded slow call,
	// the rolling Window holds at least MinRequests outcomes and the slow
	// calls among them are at least this fraction (resilience4j's
	// slowCallRateThreshold, "equal or greater"). A slow call is counted
	// whether it succeeded or failed, beside its outcome: the failure rate
	// and the slow-call rate are judged over the same window and volume,
	// and either trips. Zero (the default) disables the slow-call trip;
	// New refuses a negative value, one above 1, and NaN. See the package
	// documentation, "Slow calls".
	SlowCallRate float64
	// SlowCallThreshold is the latency above which RecordLatencyAt counts a
	// call slow (resilience4j's slowCallDurationThreshold: strictly
	// greater). Zero (the default) means no latency is slow by itself, and
	// only RecordSlowAt marks calls slow (a Transport's stream meter, say).
	// New refuses a negative value, and a positive one without a
	// SlowCallRate, which would judge latencies for nothing.
	SlowCallThreshold time.Duration

	// OpenDuration is how long a tripped breaker refuses attempts before it
	// turns half-open; zero means DefaultOpenDuration. A failed probe starts
	// a fresh open period of the same length. New refuses a negative value.
	OpenDuration time.Duration

	// MaxProbes is how many attempts a half-open breaker admits at once;
	// zero means DefaultMaxProbes. A probe's slot is freed when its outcome
	// is recorded, whatever the outcome. New refuses a negative value.
	MaxProbes int
	// SuccessThreshold is how many probe successes close a half-open
	// breaker; zero means DefaultSuccessThreshold. It may exceed MaxProbes:
	// probes then run in turns. Any probe failure opens the breaker again.
	// New refuses a negative value.
	SuccessThreshold int

	// OnStateChange, if not nil, is called after every change of state with
	// the states left and entered and the instant of the change (the now
	// the change was decided at, or the clock's reading for a zero now).
	// It is called outside the breaker's lock, once per change and in the
	// order the changes happened, from the goroutine that made the change
	// or one that made a later change; a slow hook delays that caller. It
	// may call the breaker's methods. It is never called when the state
	// does not change.
	OnStateChange func(from, to State, at time.Time)
}

// ErrConfig is wrapped by every error New returns: a field of Settings is
// out of range. errors.Is(err, ErrConfig) tests for it; errors.As with a
// *ConfigError names the field.
var ErrConfig = errors.New("breaker: invalid configuration")

// ConfigError reports the Settings field New refused: its Field
// ("Settings.OpenDuration"), the Value refused, what the field accepts
// (Want), and ErrConfig as Err. It is one type shared by the recoil
// packages that validate a configuration (breaker, budget, limit), so
// errors.As with any of their ConfigError types catches each of them.
type ConfigError = config.Error

// Must returns b if err is nil and panics with err otherwise. It wraps a
// call of New with literal Settings, where a refusal is a programming
// error:
//
//	var payments = breaker.Must(breaker.New(breaker.Settings{OpenDuration: time.Minute}))
func Must(b *Breaker, err error) *Breaker { return config.Must(b, err) }

// New returns a closed Breaker configured by s; zero fields mean the
// defaults documented on Settings. It refuses, with a *ConfigError
// wrapping ErrConfig:
//
//   - ConsecutiveFailures above math.MaxUint32 (a negative value is valid:
//     it disables the run trip);
//   - FailureRate or SlowCallRate below 0, above 1, or NaN;
//   - Window, MinRequests, SlowCallThreshold, OpenDuration, MaxProbes or
//     SuccessThreshold below 0;
//   - SlowCallThreshold above 0 with SlowCallRate 0.
func New(s Settings) (*Breaker, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	b := &Breaker{hook: s.OnStateChange, built: true}
	if s.ConsecutiveFailures < 0 {
		b.noConsec = true
	} else {
		b.failLimit = uint32(s.ConsecutiveFailures)
	}
	b.openFor = s.OpenDuration
	b.maxProbes = s.MaxProbes
	b.needOK = s.SuccessThreshold
	b.slowAfter = s.SlowCallThreshold
	rate := s.FailureRate
	if s.ConsecutiveFailures <= 0 && rate == 0 && s.SlowCallRate == 0 {
		rate, b.sparse = DefaultFailureRate, true
	}
	if rate > 0 || s.SlowCallRate > 0 || b.scaledRun() {
		w, n := s.Window, s.MinRequests
		if w == 0 {
			w = DefaultWindow
		}
		if n == 0 {
			n = DefaultMinRequests
		}
		b.win = newWindow(w, rate, s.SlowCallRate, n)
	}
	return b, nil
}

// validate returns the error refusing the first field of s out of range.
func (s *Settings) validate() error {
	bad := func(field string, value any, want string) error {
		return &ConfigError{Field: "Settings." + field, Value: value, Want: want, Err: ErrConfig}
	}
	const nonNegative = "0 (the default) or more"
	switch {
	case int64(s.ConsecutiveFailures) > math.MaxUint32:
		return bad("ConsecutiveFailures", s.ConsecutiveFailures, "at most 4294967295")
	case !(s.FailureRate >= 0 && s.FailureRate <= 1): // true for NaN
		return bad("FailureRate", s.FailureRate, "0 (off) to 1")
	case s.Window < 0:
		return bad("Window", s.Window, nonNegative)
	case s.MinRequests < 0:
		return bad("MinRequests", s.MinRequests, nonNegative)
	case !(s.SlowCallRate >= 0 && s.SlowCallRate <= 1):
		return bad("SlowCallRate", s.SlowCallRate, "0 (off) to 1")
	case s.SlowCallThreshold < 0:
		return bad("SlowCallThreshold", s.SlowCallThreshold, nonNegative)
	case s.SlowCallThreshold > 0 && s.SlowCallRate == 0:
		return bad("SlowCallRate", s.SlowCallRate, "above 0 when SlowCallThreshold is set")
	case s.OpenDuration < 0:
		return bad("OpenDuration", s.OpenDuration, nonNegative)
	case s.MaxProbes < 0:
		return bad("MaxProbes", s.MaxProbes, nonNegative)
	case s.SuccessThreshold < 0:
		return bad("SuccessThreshold", s.SuccessThreshold, nonNegative)
	}
	return nil
}

// scaledRun reports whether the run that trips is scaled to the window's
// volume (ConsecutiveFailures zero) rather than fixed or off.
func (b *Breaker) scaledRun() bool { return b.failLimit == 0 && !b.noConsec }

// window returns the failure-rate window: New's, or for a zero Breaker the
// default one, made on first use; nil for a breaker with only a fixed run.
func (b *Breaker) window() *rateWindow {
	if b.built {
		return b.win
	}
	if w := b.lazy.Load(); w != nil {
		return w
	}
	b.lazy.CompareAndSwap(nil, newWindow(DefaultWindow, DefaultFailureRate, 0, DefaultMinRequests))
	return b.lazy.Load()
}

func (b *Breaker) openDuration() int64 {
	if b.openFor == 0 {
		return int64(DefaultOpenDuration)
	}
	return int64(b.openFor)
}

func (b *Breaker) probeLimit() int {
	if b.maxProbes == 0 {
		return DefaultMaxProbes
	}
	return b.maxProbes
}

func (b *Breaker) successThreshold() int {
	if b.needOK == 0 {
		return DefaultSuccessThreshold
	}
	return b.needOK
}
