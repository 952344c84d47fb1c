package budget

import (
	"math"
	"time"
)

// Defaults of [RatioConfig]: Finagle's default RetryBudget
// (com.twitter.finagle.service.RetryBudget.apply(): ttl 10 seconds,
// minRetriesPerSec 10, percentCanRetry 0.2), which Linkerd's retry budget
// also uses (ttl 10s, minRetriesPerSecond 10, retryRatio 0.2).
const (
	// DefaultRatioTTL is how long a deposit, and a withdrawal, counts.
	DefaultRatioTTL = 10 * time.Second
	// DefaultMinRetriesPerSec is the reserve rate: retries allowed with no
	// requests at all.
	DefaultMinRetriesPerSec = 10
	// DefaultPercent is the share of requests that may be retried on top of
	// the reserve.
	DefaultPercent = 0.2
)

// Fixed-point scale of [Ratio]: a retry costs retryUnits, a request deposits
// Percent·retryUnits rounded to an integer, so Percent is honoured to six
// decimal places and never rounded in the budget's favour by more than that.
const retryUnits = 1_000_000

// maxPercent is Finagle's upper bound on percentCanRetry.
const maxPercent = 1000

// maxReserve bounds the reserve, in retries, so that scaled sums cannot
// overflow.
const maxReserve = 1 << 40

// RatioConfig configures a [Ratio]. A zero field means its default; for
// MinRetriesPerSec and Percent, a negative value means zero.
type RatioConfig struct {
	// TTL is how long a request's deposit, and a retry's withdrawal, counts
	// (Finagle ttl). Zero means [DefaultRatioTTL]; NewRatio refuses a
	// negative value.
	TTL time.Duration
	// MinRetriesPerSec sets the reserve: MinRetriesPerSec·TTL retries, in
	// whole retries rounded down, that are allowed in any TTL with no
	// requests at all (Finagle minRetriesPerSec). Zero means
	// [DefaultMinRetriesPerSec]; negative means no reserve. NewRatio refuses
	// a reserve above 2^40 retries.
	MinRetriesPerSec int
	// Percent is the share of requests that may be retried on top of the
	// reserve (Finagle percentCanRetry): 0.2 allows one retry per five
	// requests. Zero means [DefaultPercent]; negative means none, so only the
	// reserve may be retried. It is rounded to six decimal places. NewRatio
	// refuses NaN and values above 1000 (Finagle's bound).
	Percent float64
}

// Ratio is Finagle's RetryBudget (com.twitter.finagle.service.RetryBudget,
// the TokenRetryBudget over a leaky token bucket), which Linkerd also uses:
// retries may be at most a share of recent requests, plus a small reserve so
// that a client with little traffic can still retry.
//
//   - [Ratio.AdmitAt] deposits: every logical call's first attempt adds
//     Percent of a retry to the balance. It never refuses.
//   - [Ratio.RetryAt] withdraws one retry if the balance allows it, and
//     refuses otherwise, leaving the balance untouched.
//   - Deposits and withdrawals both expire after about TTL.
//   - The balance is reserve + Percent·(requests) − (retries), over the
//     requests and retries of about the last TTL, where reserve is
//     MinRetriesPerSec·TTL.
//   - [Ratio.RecordAt] does nothing: outcomes do not move this budget.
//
// Like Finagle's WindowedAdder, the window is cut into 10 slices of TTL/10
// and expires a slice at a time. The precise guarantee, for instants that do
// not go backwards, is: whenever a retry is granted at instant t,
//
//	retries granted in (t − 0.9·TTL, t] ≤ reserve + Percent·(requests in (t − TTL, t])
//
// with Percent as rounded to six decimal places. The retries side is only
// bounded over 0.9·TTL, not TTL, because the oldest slice may already have
// expired; that is the granularity slack. Deposits made shortly before a
// window can still pay for retries inside it, so the bound holds for the
// windows that end at each grant, not for every window wherever it lies (no
// design that lets deposits live a TTL can do better).
//
// Time comes from the now argument; the zero time means time.Now(). An
// instant less than 0.9·TTL before the latest one seen counts as the latest
// (concurrent callers' clock readings arrive slightly out of order); a jump
// of TTL or more in either direction (a suspended process, a clock step)
// empties the window, leaving only the reserve. Between the two, which one
// happens depends on where the slice boundaries fall.
//
// The zero value is an empty budget with the defaults. A Ratio is safe for
// concurrent use and must not be copied after first use. Its counters are
// atomic: AdmitAt is one reading of the monotonic clock and one atomic add,
// RetryAt adds the retry and takes it back if the balance did not hold it,
// and only moving to a new slice of the window, once per TTL/10, takes a
// lock. Concurrent retries competing for the last of the balance may both
// be refused where one after the other one would have been granted; the
// bound above holds either way.
type Ratio struct {
	// width, reserve and deposit are set by NewRatio and never change;
	// width zero means the defaults.
	width   time.Duration // TTL/slices
	reserve int64         // in retryUnits
	deposit int64         // per request, in retryUnits
	w       slidingWindow // a: requests, b: retries
}

// NewRatio returns an empty [Ratio] configured by c; zero fields mean their
// defaults. It refuses, with a *[ConfigError] wrapping [ErrConfig]:
//
//   - TTL below 0;
//   - MinRetriesPerSec whose reserve, MinRetriesPerSec·TTL, is above 2^40
//     retries (a negative value is valid: no reserve);
//   - Percent above 1000, or NaN (a negative value is valid: none).
func NewRatio(c RatioConfig) (*Ratio, error) {
	if c.TTL < 0 {
		return nil, invalid("RatioConfig.TTL", c.TTL, "0 (the default) or more")
	}
	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultRatioTTL
	}
	var reserve int64
	switch {
	case c.MinRetriesPerSec == 0:
		reserve = reserveOf(DefaultMinRetriesPerSec, ttl)
	case c.MinRetriesPerSec > 0:
		r := math.Floor(float64(c.MinRetriesPerSec) * ttl.Seconds())
		if r > maxReserve {
			return nil, invalid("RatioConfig.MinRetriesPerSec", c.MinRetriesPerSec, "a reserve, MinRetriesPerSec·TTL, of at most 2^40 retries")
		}
		reserve = int64(r) * retryUnits
	}
	var deposit int64
	switch {
	case !(c.Percent <= maxPercent): // true for NaN
		return nil, invalid("RatioConfig.Percent", c.Percent, "at most 1000 (0 is the default, a negative share none)")
	case c.Percent == 0:
		deposit = DefaultPercent * retryUnits
	case c.Percent > 0:
		deposit = int64(math.Round(c.Percent * retryUnits))
	}
	return &Ratio{width: sliceWidth(ttl), reserve: reserve, deposit: deposit}, nil
}

// reserveOf is perSec·ttl whole retries, in retryUnits.
func reserveOf(perSec int, ttl time.Duration) int64 {
	return int64(math.Floor(float64(perSec)*ttl.Seconds())) * retryUnits
}

// params returns the slice width, the reserve and the deposit per request.
func (r *Ratio) params() (width time.Duration, reserve, deposit int64) {
	if r.width == 0 {
		return DefaultRatioTTL / slices,
			DefaultMinRetriesPerSec * int64(DefaultRatioTTL/time.Second) * retryUnits,
			DefaultPercent * retryUnits
	}
	return r.width, r.reserve, r.deposit
}

// balance is the balance in retryUnits over requests and retries.
func balance(reserve, deposit, requests, retries int64) int64 {
	return reserve + deposit*requests - retryUnits*retries
}

// AdmitAt deposits one request and reports true: Finagle's budget never
// refuses a first attempt.
func (r *Ratio) AdmitAt(now time.Time) bool {
	width, _, _ := r.params()
	r.w.count(now, width, counterA, 1) // a full slice takes no more deposits
	return true
}

// RetryAt withdraws one retry and reports true if the balance holds at least
// one retry; otherwise it reports false and withdraws nothing. The cause is
// unused: every retry costs the same. It also refuses a retry when 2³¹−1
// have been granted in the newest slice of the window.
func (r *Ratio) RetryAt(now time.Time, c Cause) bool {
	width, reserve, deposit := r.params()
	// Withdraw first, then look: of two retries competing for the last of
	// the balance, the later one to withdraw sees both withdrawals.
	k, ok := r.w.count(now, width, counterB, 1)
	if !ok {
		return false // window.MaxCount retries granted in one slice
	}
	if requests, retries := r.w.sums(); balance(reserve, deposit, requests, retries) >= 0 {
		return true
	}
	r.w.undo(k, counterB, 1)
	return false
}

// RecordAt does nothing: Finagle's budget is moved by requests and retries,
// not by their outcomes. It does not read the clock.
func (r *Ratio) RecordAt(now time.Time, o Outcome) {}

// Admit is shorthand for AdmitAt(time.Now()).
func (r *Ratio) Admit() bool { return r.AdmitAt(time.Time{}) }

// Retry is shorthand for RetryAt(time.Now(), c).
func (r *Ratio) Retry(c Cause) bool { return r.RetryAt(time.Time{}, c) }

// Record is shorthand for RecordAt(time.Now(), o).
func (r *Ratio) Record(o Outcome) { r.RecordAt(time.Time{}, o) }

// RatioState is a snapshot of a [Ratio], for tests and metrics.
type RatioState struct {
	// Balance is how many retries RetryAt would grant now, one after
	// another, with no requests in between. It is never negative.
	Balance int64
	// Reserve is MinRetriesPerSec·TTL, in retries.
	Reserve int64
	// Requests and Retries are the deposits and withdrawals the window
	// holds.
	Requests, Retries int64
}

// StateAt returns a snapshot of the budget at now; the zero time means
// time.Now(). Like the other methods, it moves the window to now.
func (r *Ratio) StateAt(now time.Time) RatioState {
	width, reserve, deposit := r.params()
	r.w.slice(now, width)
	requests, retries := r.w.sums()
	return RatioState{
		Balance:  max(balance(reserve, deposit, requests, retries), 0) / retryUnits,
		Reserve:  reserve / retryUnits,
		Requests: requests,
		Retries:  retries,
	}
}

// State is shorthand for StateAt(time.Now()).
func (r *Ratio) State() RatioState { return r.StateAt(time.Time{}) }
