package budget

import (
	"math"
	"sync/atomic"
	"time"
)

// Defaults of [ShareConfig], which are recoil's default retry budget
// (docs/why.md, "Do no harm").
//
// The share is Finagle's and Linkerd's default percentCanRetry (0.2), here
// paid by successful attempts rather than by requests, so that it closes as
// the dependency stops answering. The reserve is the capacity of gRFC A6's
// worked example (maxTokens 10): the retries a client with no history may
// make before it has earned any.
const (
	// DefaultSharePercent is the retries one successful attempt pays for.
	DefaultSharePercent = 0.2
	// DefaultShareReserve is the most retries the budget holds, and what it
	// starts with.
	DefaultShareReserve = 10
)

// maxShareReserve bounds the reserve so that fixed-point sums cannot overflow.
const maxShareReserve = 1 << 40

// ShareConfig configures a [Share]. A zero field means its default; a
// negative field means zero.
type ShareConfig struct {
	// Percent is the share of successful attempts that may be retried:
	// each success puts Percent of a retry into the budget, so 0.2 pays for
	// one retry per five successes. Zero means [DefaultSharePercent];
	// negative means none, so only the reserve can be retried. It is kept
	// to three decimal places. NewShare refuses NaN and a value above 1000.
	Percent float64
	// Reserve is the most retries the budget holds, and its starting
	// balance: a burst of failures may retry this many at once before
	// successes have paid for more. Zero means [DefaultShareReserve];
	// negative means none. A budget with a Percent holds at least one
	// retry, or successes could never pay for one. It is kept to three
	// decimal places. NewShare refuses NaN and a value above 2^40.
	Reserve float64
}

// Share is a retry budget that lets retries be at most a share of the
// attempts that succeed: every successful attempt pays Percent of a retry
// into it, every retry takes one out, and it holds at most Reserve.
//
//   - [Share.RetryAt] withdraws one retry if the balance holds one, and
//     refuses otherwise.
//   - [Share.RecordAt] deposits Percent for a [Success]; other outcomes
//     change nothing (the retry they may cause pays for itself).
//   - First attempts are never refused.
//
// Over any stretch of time, the retries it grants are at most
// Reserve + Percent·(successful attempts in that stretch). Since each call
// succeeds at most once, a policy's attempts per call stay below
// 1 + Percent·(the share of calls answered) + Reserve/(calls).
//
// That bound is what separates the failures a retry recovers from the ones
// it only repeats. While failures are independent and below Percent/(1+Percent)
// of attempts (about 17 % at the default), successes pay for every retry
// the failures want and every one goes. Above it the budget is the limit,
// and since it is paid by successes, it closes as the dependency stops
// answering: at a 50 % failure rate one call in ten may retry, at 90 % one
// in fifty, and against a dependency that is down only the Reserve goes.
// A load that amplified retries could push past a dependency's capacity is
// at most 1 + Percent times what it would be without retries.
//
// gRFC A6's [TokenBucket] charges failures instead of retries and stops
// retrying at a failure rate near TokenRatio/(1+TokenRatio), about 9 % at
// its example settings, which turns off the retries that would have won
// most of what a 10 %–50 % failure rate loses; Finagle's [Ratio] is paid by
// requests, so it keeps retrying a share of calls to a dependency that is
// down.
//
// No method reads the clock; now is unused. The balance is fixed-point
// (thousandths of a retry) in one atomic integer, and recording a success
// while the budget is full is one atomic load with no write, so the healthy
// path does not contend for the cache line.
//
// The zero value is a full budget with the defaults ([DefaultSharePercent],
// [DefaultShareReserve]). A Share is safe for concurrent use and must not
// be copied after first use.
type Share struct {
	// deficit is the capacity minus the balance, in milli-retries, in
	// [0, capMilli]; keeping the deficit makes the zero value full.
	deficit atomic.Int64
	// capSet and paySet are the capacity and the deposit per success, in
	// milli-retries, plus one, set by NewShare and never changed; zero
	// means the defaults. The offset keeps the zero value the default
	// budget without a flag of its own, so a Share is three words, as a
	// TokenBucket is.
	capSet int64
	paySet int64
}

// NewShare returns a full [Share] configured by c; zero fields mean their
// defaults. It refuses, with a *[ConfigError] wrapping [ErrConfig], a
// Percent above 1000 or NaN, and a Reserve above 2^40 or NaN.
func NewShare(c ShareConfig) (*Share, error) {
	switch {
	case math.IsNaN(c.Percent) || c.Percent > maxPercent:
		return nil, invalid("ShareConfig.Percent", c.Percent, "0 (the default), a negative value (none) or up to 1000")
	case math.IsNaN(c.Reserve) || c.Reserve > maxShareReserve:
		return nil, invalid("ShareConfig.Reserve", c.Reserve, "0 (the default), a negative value (none) or up to 2^40")
	}
	capMilli, payMilli := int64(DefaultShareReserve*milli), int64(DefaultSharePercent*milli)
	switch {
	case c.Reserve < 0:
		capMilli = 0
	case c.Reserve > 0:
		capMilli = int64(math.Round(c.Reserve * milli))
	}
	switch {
	case c.Percent < 0:
		payMilli = 0
	case c.Percent > 0:
		payMilli = max(int64(math.Round(c.Percent*milli)), 1)
	}
	// A budget that may hold less than one retry could never grant one;
	// hold at least one, so a Percent with no Reserve still retries.
	if payMilli > 0 {
		capMilli = max(capMilli, milli)
	}
	return &Share{capSet: capMilli + 1, paySet: payMilli + 1}, nil
}

// limits returns the capacity and the deposit per success, in milli-retries.
func (s *Share) limits() (capMilli, payMilli int64) {
	if s.capSet == 0 {
		return DefaultShareReserve * milli, DefaultSharePercent * milli
	}
	return s.capSet - 1, s.paySet - 1
}

// AdmitAt reports whether a logical call may make its first attempt: always
// true. now is unused.
func (s *Share) AdmitAt(now time.Time) bool { return true }

// RetryAt withdraws one retry and reports true if the balance holds one;
// otherwise it reports false and changes nothing. now and the cause are
// unused.
func (s *Share) RetryAt(now time.Time, c Cause) bool {
	capMilli, _ := s.limits()
	for {
		d := s.deficit.Load()
		if d+milli > capMilli {
			return false
		}
		if s.deficit.CompareAndSwap(d, d+milli) {
			return true
		}
	}
}

// RefundAt gives back a retry RetryAt granted that did not go (a later
// guard refused it, recoil.Refunder), never filling the budget past its
// capacity. A retry costs one whatever its cause and size, so c and n are
// unused, as is now.
func (s *Share) RefundAt(now time.Time, c Cause, n int64) {
	for {
		d := s.deficit.Load()
		if d == 0 || s.deficit.CompareAndSwap(d, max(d-milli, 0)) {
			return
		}
	}
}

// RecordAt reports one attempt's outcome: a [Success] deposits Percent of
// a retry, up to the capacity; any other outcome changes nothing. now is
// unused.
func (s *Share) RecordAt(now time.Time, o Outcome) {
	if o.Result != Success {
		return
	}
	d := s.deficit.Load()
	if d == 0 { // full: the healthy path writes nothing
		return
	}
	_, pay := s.limits()
	if pay == 0 {
		return
	}
	for !s.deficit.CompareAndSwap(d, max(d-pay, 0)) {
		if d = s.deficit.Load(); d == 0 {
			return
		}
	}
}

// Full reports whether the budget holds all it can, so that recording a
// success would change nothing: one atomic load.
func (s *Share) Full() bool { return s.deficit.Load() == 0 }

// Admit is shorthand for AdmitAt(time.Time{}).
func (s *Share) Admit() bool { return s.AdmitAt(time.Time{}) }

// Retry is shorthand for RetryAt(time.Time{}, c).
func (s *Share) Retry(c Cause) bool { return s.RetryAt(time.Time{}, c) }

// Record is shorthand for RecordAt(time.Time{}, o).
func (s *Share) Record(o Outcome) { s.RecordAt(time.Time{}, o) }

// ShareState is a snapshot of a [Share], for tests and metrics.
type ShareState struct {
	// Retries is the balance: how many retries may go now, to three
	// decimal places.
	Retries float64
	// Reserve is the capacity, Percent what a success deposits.
	Reserve float64
	Percent float64
}

// State returns a snapshot of the budget.
func (s *Share) State() ShareState {
	c, p := s.limits()
	return ShareState{
		Retries: float64(c-s.deficit.Load()) / milli,
		Reserve: float64(c) / milli,
		Percent: float64(p) / milli,
	}
}
