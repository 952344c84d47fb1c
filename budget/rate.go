package budget

import (
	"math"
	"sync"
	"time"

	"github.com/recoil-go/recoil/internal/pace"
)

// DefaultRateWindow is a [Rate]'s period when its config names none: model
// providers meter requests and tokens per minute.
const DefaultRateWindow = time.Minute

// maxRateUnits bounds a Rate's Limit and Burst and any count it is given:
// 2^53, so that counts stay exact in a float64.
const maxRateUnits = 1 << 53

// RateConfig configures a [Rate].
type RateConfig struct {
	// Limit is how many units the Rate allows per Window: a provider's
	// tokens or requests per minute. Required: NewRate refuses zero, a
	// negative Limit and one above 2^53.
	Limit int64
	// Window is the period of Limit. Zero means [DefaultRateWindow];
	// NewRate refuses a negative one.
	Window time.Duration
	// Burst is how many units may go at once after a quiet spell. Zero
	// means Limit, which is how providers' buckets fill (a whole minute's
	// allowance, replenished continuously); NewRate refuses a negative one
	// and one above 2^53. An attempt that costs more than Burst never goes.
	Burst int64
}

// Rate is a rate limit in one process: a token bucket of Burst units that
// refills Limit per Window (the generic cell rate algorithm, one instant
// for the whole bucket), charged before every attempt, first attempts
// included. It is the local counterpart of a fleet.Allowance: give a
// process that calls a model API alone its provider's tokens-per-minute
// limit, and it holds the process under it instead of finding the limit
// with 429s.
//
// It is a CostBudget of package recoil: an attempt costs one unit, or the
// cost its call's context carries (recoil.WithCost; recoilhttp.Transport
// estimates one from a model request). SettleAt corrects a charge once the
// response reports what the attempt really cost. LearnAt takes what a
// provider's rate-limit headers say: a limit, what remains, and the time to
// the reset.
//
// # Pacing
//
// When the provider says R units remain and the meter is whole again in D,
// and R is less than the limit refills over D (R·Window < Limit·D: spent at
// the limit's rate, the remainder would run out before the reset), the Rate
// paces until the reset: an attempt goes only once the attempts before it
// have been spread at D/R per unit, so the remainder lasts until the reset
// instead of going in one burst and meeting the 429. With R = 0 nothing
// goes until the reset. A later LearnAt that finds the remainder large
// enough ends the pacing.
//
// The zero time passed as now means time.Now(). The zero Rate has no limit:
// it admits everything until LearnAt teaches it one. A Rate is safe for
// concurrent use; do not copy it after first use.
type Rate struct {
	mu     sync.Mutex
	limit  int64 // 0: no limit
	burst  int64
	window time.Duration
	share  float64   // Burst/Limit as configured, kept when a limit is learned
	tat    time.Time // the bucket's theoretical arrival time: full at or before now
	pace   pace.Pace
}

// NewRate returns a full Rate configured by c. It refuses, with a
// *[ConfigError] wrapping [ErrConfig], a Limit that is not in [1, 2^53], a
// negative Window, and a Burst that is negative or above 2^53.
func NewRate(c RateConfig) (*Rate, error) {
	switch {
	case c.Limit <= 0 || c.Limit > maxRateUnits:
		return nil, invalid("RateConfig.Limit", c.Limit, "1 to 2^53 units per Window")
	case c.Window < 0:
		return nil, invalid("RateConfig.Window", c.Window, "0 (the default, a minute) or a positive duration")
	case c.Burst < 0 || c.Burst > maxRateUnits:
		return nil, invalid("RateConfig.Burst", c.Burst, "0 (the default, Limit) to 2^53")
	}
	if c.Window == 0 {
		c.Window = DefaultRateWindow
	}
	if c.Burst == 0 {
		c.Burst = c.Limit
	}
	return &Rate{limit: c.Limit, burst: c.Burst, window: c.Window, share: float64(c.Burst) / float64(c.Limit)}, nil
}

// per returns the time n units take to refill. r.mu must be held.
func (r *Rate) per(n int64) time.Duration {
	d := float64(n) * float64(r.window) / float64(r.limit)
	return time.Duration(min(d, math.MaxInt64/2))
}

// AdmitAt charges a first attempt one unit: AdmitNAt(now, 1).
func (r *Rate) AdmitAt(now time.Time) bool { return r.AdmitNAt(now, 1) }

// RetryAt charges a retry one unit: RetryNAt(now, c, 1).
func (r *Rate) RetryAt(now time.Time, c Cause) bool { return r.RetryNAt(now, c, 1) }

// RetryNAt charges a retry n units; the cause is unused. See AdmitNAt.
func (r *Rate) RetryNAt(now time.Time, c Cause, n int64) bool { return r.AdmitNAt(now, n) }

// RecordAt does nothing: a Rate counts what goes, not how it went. Use it
// under a retry budget (a fleet.Guard's, or its own) to bound retries too.
func (r *Rate) RecordAt(now time.Time, o Outcome) {}

// AdmitNAt reports whether an attempt that costs n units may go at now,
// and charges it if so: it must fit the bucket and, while the Rate paces,
// the pace. n ≤ 0 is always allowed and charges nothing; n above Burst is
// never allowed.
func (r *Rate) AdmitNAt(now time.Time, n int64) bool {
	if n <= 0 {
		return true
	}
	now = clock(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limit == 0 {
		return true
	}
	if n > r.burst || !r.pace.Allow(now) {
		return false
	}
	next := later(r.tat, now).Add(r.per(n))
	if next.Sub(now) > r.per(r.burst) {
		return false
	}
	r.tat = next
	r.pace.Settle(now, n)
	return true
}

// SettleAt corrects the charge of an attempt that was charged charged
// units and cost actual (the usage a model API reported): the difference
// is charged when actual is more — the units were spent, so the bucket may
// go into debt, by at most one Window's refill beyond empty — and
// refunded when it is less, never more than charged. A negative actual
// changes nothing.
func (r *Rate) SettleAt(now time.Time, charged, actual int64) {
	if actual < 0 || charged < 0 || actual == charged {
		return
	}
	now = clock(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limit == 0 {
		return
	}
	d := min(actual, maxRateUnits) - charged
	if d > 0 {
		r.tat = later(r.tat, now).Add(r.per(d))
		if most := now.Add(r.per(r.burst) + r.window); r.tat.After(most) {
			r.tat = most
		}
	} else {
		r.tat = r.tat.Add(-r.per(-d)) // -d ≤ charged: actual ≥ 0
	}
	r.pace.Settle(now, d)
}

// LearnAt takes what a provider's rate-limit headers say about the meter
// the Rate follows: limit, when positive, becomes the Limit (Burst keeps
// its share of it); remaining, when not negative, lowers the bucket to
// that many units and reset, when not negative, to a bucket that is whole
// no sooner than reset from now — neither ever raises it, since attempts
// in flight are not in the provider's count yet. With both known it paces
// or stops pacing (see Rate). fleet.ParseHeader reads the headers of
// OpenAI and Anthropic.
func (r *Rate) LearnAt(now time.Time, limit, remaining int64, reset time.Duration) {
	now = clock(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	if limit > 0 {
		limit = min(limit, maxRateUnits)
		if r.limit == 0 {
			r.window, r.share = DefaultRateWindow, 1
		}
		r.limit = limit
		r.burst = max(int64(math.Round(r.share*float64(limit))), 1)
	}
	if r.limit == 0 {
		return
	}
	ptat := r.tat
	if remaining >= 0 {
		ptat = now.Add(r.per(r.burst) - r.per(min(remaining, r.burst)))
	}
	if reset >= 0 {
		ptat = later(ptat, now.Add(reset))
	}
	r.tat = later(r.tat, ptat)
	if remaining >= 0 && reset >= 0 {
		if paced(remaining, reset, r.limit, r.window) {
			r.pace.Set(now, remaining, reset)
		} else {
			r.pace = pace.Pace{}
		}
	}
}

// paced reports the pacing rule: remaining units will not last until the
// reset if spent at the limit's rate, remaining·window < limit·reset.
func paced(remaining int64, reset time.Duration, limit int64, window time.Duration) bool {
	return reset > 0 && float64(remaining)*float64(window) < float64(limit)*float64(reset)
}

// Admit is shorthand for AdmitAt(time.Time{}).
func (r *Rate) Admit() bool { return r.AdmitAt(time.Time{}) }

// Retry is shorthand for RetryAt(time.Time{}, c).
func (r *Rate) Retry(c Cause) bool { return r.RetryAt(time.Time{}, c) }

// Record is shorthand for RecordAt(time.Time{}, o).
func (r *Rate) Record(o Outcome) { r.RecordAt(time.Time{}, o) }

// RateState is a snapshot of a [Rate], for tests and metrics.
type RateState struct {
	// Limit is the limit per Window in force; zero means none.
	Limit int64
	// Window is the period of Limit.
	Window time.Duration
	// Burst is the bucket's capacity.
	Burst int64
	// Available is how many units the bucket holds at the snapshot's
	// instant; negative while a settlement's debt is being paid off.
	Available int64
	// PacedUntil is when the pacing ends; zero when the Rate does not pace.
	PacedUntil time.Time
}

// StateAt returns a snapshot at now; the zero now means time.Now().
func (r *Rate) StateAt(now time.Time) RateState {
	now = clock(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	s := RateState{Limit: r.limit, Window: r.window, Burst: r.burst}
	if r.limit == 0 {
		return s
	}
	owed := float64(later(r.tat, now).Sub(now)) * float64(r.limit) / float64(r.window)
	s.Available = r.burst - int64(math.Ceil(owed-1e-6))
	if u := r.pace.Until(); now.Before(u) {
		s.PacedUntil = u
	}
	return s
}

// State is shorthand for StateAt(time.Now()).
func (r *Rate) State() RateState { return r.StateAt(time.Time{}) }

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// clock resolves the zero-means-now convention.
func clock(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}
