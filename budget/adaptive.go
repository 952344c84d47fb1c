package budget

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/recoil-go/recoil/internal/window"
)

// Defaults of [AdaptiveConfig], from "Handling Overload" (chapter 21 of
// Site Reliability Engineering, Beyer et al., O'Reilly 2016), section
// "Client-Side Throttling": each client keeps the last two minutes of its
// request history, and the book's worked value of the multiplier is K = 2.
const (
	// DefaultK is the multiplier on accepts.
	DefaultK = 2
	// DefaultAdaptiveWindow is how much history the counts cover.
	DefaultAdaptiveWindow = 2 * time.Minute
)

// AdaptiveConfig configures an [Adaptive]. A zero field means its default.
type AdaptiveConfig struct {
	// K is the multiplier on accepts. The throttle lets about K requests
	// through per accepted one before refusing locally: lower is more
	// aggressive (the SRE book mentions 1.1), higher lets more requests
	// reach a backend that is refusing. Zero means [DefaultK]; NewAdaptive
	// refuses a negative value, NaN and +Inf.
	K float64
	// Window is how much history the counts cover. Zero means
	// [DefaultAdaptiveWindow]; NewAdaptive refuses a negative value.
	Window time.Duration
	// Rand is the source of the draws against the reject probability. It is
	// called with a lock of the Adaptive's held, so it need not be safe for
	// concurrent use, and only when the probability is above zero. Nil means
	// math/rand/v2's top-level Float64.
	Rand interface{ Float64() float64 }
}

// Adaptive is the client-side adaptive throttle of the Google SRE book
// ("Handling Overload", chapter 21, "Client-Side Throttling"). Each client
// counts, over a sliding window,
//
//   - requests: every attempt the application asked for, first attempts and
//     retries, including those the throttle itself refused;
//   - accepts: attempts the backend accepted, recorded as [Success],
//     [Failure] or [Permanent]. [Overload] is a rejection and is not an
//     accept; [Ignored] counts nothing (and takes back nothing).
//
// and refuses each new attempt locally, without sending it, with probability
//
//	p = max(0, (requests − K·accepts) / (requests + 1))
//
// which is always below 1. While the backend accepts everything, p stays 0
// and nothing is refused or drawn. Unlike the other budgets here, Adaptive
// may refuse first attempts, in [Adaptive.AdmitAt]; [Adaptive.RetryAt]
// applies the same draw to retries.
//
// The window is cut into 10 slices of Window/10 and expires a slice at a
// time, so the counts cover between 0.9·Window and Window of history. Time
// comes from the now argument; the zero time means time.Now(). An instant
// less than 0.9·Window before the latest one seen counts as the latest; a
// jump of Window or more in either direction empties the window. Between the
// two, which one happens depends on where the slice boundaries fall.
//
// The zero value is ready to use with the defaults and the global random
// source. An Adaptive is safe for concurrent use and must not be copied
// after first use. Its counts are atomic: an attempt or an accept is one
// reading of the monotonic clock and one atomic add (an attempt also reads
// the counts), and only moving to a new slice of the window, once per
// Window/10, and drawing from Rand take a lock.
type Adaptive struct {
	// width, k and rnd are set by NewAdaptive and never change; width zero
	// means the defaults.
	width  time.Duration
	k      float64
	rnd    interface{ Float64() float64 }
	drawMu sync.Mutex    // guards rnd
	w      slidingWindow // a: requests, b: accepts
}

// NewAdaptive returns an [Adaptive] with no history, configured by c.
// Requests are counted where attempts are asked for ([Adaptive.AdmitAt],
// [Adaptive.RetryAt]) and accepts where outcomes are recorded: a caller
// that only records outcomes never moves the reject probability above 0.
// Zero fields mean their defaults. It refuses, with a *[ConfigError]
// wrapping [ErrConfig]:
//
//   - K below 0, +Inf, or NaN;
//   - Window below 0.
func NewAdaptive(c AdaptiveConfig) (*Adaptive, error) {
	switch {
	case !(c.K >= 0) || math.IsInf(c.K, 1): // true for NaN
		return nil, invalid("AdaptiveConfig.K", c.K, "0 (the default) or a finite number above it")
	case c.Window < 0:
		return nil, invalid("AdaptiveConfig.Window", c.Window, "0 (the default) or more")
	}
	a := &Adaptive{width: sliceWidth(DefaultAdaptiveWindow), k: DefaultK, rnd: c.Rand}
	if c.Window > 0 {
		a.width = sliceWidth(c.Window)
	}
	if c.K > 0 {
		a.k = c.K
	}
	return a, nil
}

func (a *Adaptive) params() (width time.Duration, k float64) {
	if a.width == 0 {
		return DefaultAdaptiveWindow / slices, DefaultK
	}
	return a.width, a.k
}

// probability is the reject probability from the counts.
func probability(k float64, requests, accepts int64) float64 {
	req, acc := float64(requests), float64(accepts)
	return max(0, (req-k*acc)/(req+1))
}

// attempt counts one requested attempt at now and reports whether it may go.
func (a *Adaptive) attempt(now time.Time) bool {
	width, k := a.params()
	for {
		s := a.w.slice(now, width)
		requests, accepts := a.w.sums()
		p := probability(k, requests, accepts) // from the history before this attempt
		if a.w.ring.Add(s, counterA, 1) == window.Later {
			continue // the window moved on since s was read
		}
		if p <= 0 {
			return true
		}
		return a.draw() >= p
	}
}

// draw returns a number in [0, 1).
func (a *Adaptive) draw() float64 {
	if a.rnd == nil {
		return rand.Float64()
	}
	a.drawMu.Lock()
	defer a.drawMu.Unlock()
	return a.rnd.Float64()
}

// AdmitAt counts a first attempt as a request and reports whether it may be
// sent. It refuses with the reject probability of the window before this
// attempt, which is zero while requests ≤ K·accepts. Attempts still in
// flight count as requests not (yet) accepted, so a burst of concurrent
// attempts on a throttle with little history can meet a probability above
// zero even from a healthy backend.
func (a *Adaptive) AdmitAt(now time.Time) bool { return a.attempt(now) }

// RetryAt counts a retry as a request and reports whether it may be sent,
// drawing against the reject probability exactly as AdmitAt does. The cause is
// unused.
func (a *Adaptive) RetryAt(now time.Time, c Cause) bool { return a.attempt(now) }

// RecordAt counts an accept for an attempt the backend accepted ([Success],
// [Failure], [Permanent]); other results change nothing.
func (a *Adaptive) RecordAt(now time.Time, o Outcome) {
	switch o.Result {
	case Success, Failure, Permanent:
	default:
		return
	}
	width, _ := a.params()
	a.w.count(now, width, counterB, 1)
}

// RejectProbabilityAt returns the probability that an attempt made at now
// would be refused; the zero time means time.Now(). It is in [0, 1). It
// moves the window to now but counts nothing.
func (a *Adaptive) RejectProbabilityAt(now time.Time) float64 {
	return a.StateAt(now).RejectProbability
}

// Admit is shorthand for AdmitAt(time.Now()).
func (a *Adaptive) Admit() bool { return a.AdmitAt(time.Time{}) }

// Retry is shorthand for RetryAt(time.Now(), c).
func (a *Adaptive) Retry(c Cause) bool { return a.RetryAt(time.Time{}, c) }

// Record is shorthand for RecordAt(time.Now(), o).
func (a *Adaptive) Record(o Outcome) { a.RecordAt(time.Time{}, o) }

// AdaptiveState is a snapshot of an [Adaptive], for tests and metrics.
type AdaptiveState struct {
	// Requests and Accepts are the counts the window holds.
	Requests, Accepts int64
	// RejectProbability is max(0, (Requests − K·Accepts)/(Requests + 1)).
	RejectProbability float64
}

// StateAt returns a snapshot of the throttle at now; the zero time means
// time.Now(). It moves the window to now but counts nothing.
func (a *Adaptive) StateAt(now time.Time) AdaptiveState {
	width, k := a.params()
	a.w.slice(now, width)
	requests, accepts := a.w.sums()
	return AdaptiveState{
		Requests:          requests,
		Accepts:           accepts,
		RejectProbability: probability(k, requests, accepts),
	}
}

// State is shorthand for StateAt(time.Now()).
func (a *Adaptive) State() AdaptiveState { return a.StateAt(time.Time{}) }
