package budget

import (
	"sync/atomic"
	"time"
)

// Defaults of [QuotaConfig]: the retry quota of the AWS SDKs' "standard"
// retry mode as it stood before the 2026 update (aws-sdk-go-v2 aws/retry:
// DefaultRetryRateTokens, RetryCost, RetryTimeoutCost, DefaultNoRetryIncrement;
// the same constants in aws-sdk-js-v3 middleware-retry and botocore).
const (
	// DefaultQuotaCapacity is the quota's capacity and starting balance.
	DefaultQuotaCapacity = 500
	// DefaultRetryCost is what a retry after an ordinary failure costs.
	DefaultRetryCost = 5
	// DefaultTimeoutCost is what a retry after a timeout costs.
	DefaultTimeoutCost = 10
	// DefaultThrottleCost is what a retry after throttling costs: before
	// 2026 the standard mode did not price it apart from an ordinary failure.
	DefaultThrottleCost = DefaultRetryCost
	// DefaultNoRetryIncrement is what a success on the first attempt puts back.
	DefaultNoRetryIncrement = 1
)

// QuotaConfig configures a [Quota]. A zero field means its default; a
// negative field means zero (a zero cost makes that kind of retry free, a
// zero capacity refuses every retry that costs anything). NewQuota refuses
// a field above 2^40, so that no sum of charges can overflow.
type QuotaConfig struct {
	// Capacity is the most the quota holds, and what it starts with.
	// Zero means [DefaultQuotaCapacity].
	Capacity int
	// RetryCost is charged for a retry after a failure that was not a
	// timeout. Zero means [DefaultRetryCost].
	RetryCost int
	// TimeoutCost is charged for a retry after a timeout. Zero means
	// [DefaultTimeoutCost].
	TimeoutCost int
	// ThrottleCost is charged for a retry after throttling or overload.
	// Zero means [DefaultThrottleCost].
	ThrottleCost int
	// NoRetryIncrement is put back when a first attempt succeeds. Zero means
	// [DefaultNoRetryIncrement].
	NoRetryIncrement int
}

// Quota2026 returns the retry quota of the AWS SDKs' standard mode after
// the 2026 update (opt-in with AWS_NEW_RETRIES_2026=true, announced to
// become the default no sooner than November 2026; aws-sdk-go-v2 pull
// request 3400 and issue 3416): a transient retry costs 14 and timeouts are
// "no longer treated differently from other transient errors", so
// TimeoutCost is 14 too; a retry after a throttling error gets the
// discounted cost of 5. It is a function, not a variable, so no caller can
// change what another gets.
func Quota2026() QuotaConfig {
	return QuotaConfig{
		Capacity:         500,
		RetryCost:        14,
		TimeoutCost:      14,
		ThrottleCost:     5,
		NoRetryIncrement: 1,
	}
}

// Quota is the retry quota of the AWS SDKs' "standard" retry mode: a bucket
// of Capacity tokens, starting full.
//
//   - A retry is charged RetryCost, TimeoutCost after a timeout or
//     ThrottleCost after throttling, and is refused, leaving the balance
//     untouched, when the balance is below its cost.
//   - A successful attempt that was a retry refunds what that retry was
//     charged ([Outcome.After] tells which cost it was).
//   - A successful first attempt ([Outcome.Attempt] of 1, or 0 if unset)
//     puts back NoRetryIncrement.
//   - Nothing else changes the balance: a failure costs only when it is
//     retried. The balance never exceeds Capacity.
//
// With the defaults, a full quota pays for 100 retries after ordinary
// failures, or 50 after timeouts, before refusing.
//
// First attempts are never refused. No method reads the clock. The balance
// is one atomic integer; recording a success while the quota is full is a
// single atomic load with no write.
//
// The zero value is a full quota with the defaults. A Quota is safe for
// concurrent use and must not be copied after first use.
type Quota struct {
	// deficit is Capacity minus the balance, in [0, capacity] but for a
	// charge RetryAt is taking back. Keeping the deficit makes the zero
	// value a full quota.
	deficit atomic.Int64
	// The rest is set by NewQuota and never changes; configured false means
	// the defaults.
	configured       bool
	capacity         int64
	retryCost        int64
	timeoutCost      int64
	throttleCost     int64
	noRetryIncrement int64
}

// maxQuota bounds every field of QuotaConfig: concurrent charges of up to
// 2^40 each cannot overflow the int64 deficit.
const maxQuota = 1 << 40

// NewQuota returns a full [Quota] configured by c; zero fields mean their
// defaults, negative ones zero. It refuses, with a *[ConfigError] wrapping
// [ErrConfig], any field above 2^40.
func NewQuota(c QuotaConfig) (*Quota, error) {
	for _, f := range [...]struct {
		name string
		v    int
	}{
		{"Capacity", c.Capacity}, {"RetryCost", c.RetryCost}, {"TimeoutCost", c.TimeoutCost},
		{"ThrottleCost", c.ThrottleCost}, {"NoRetryIncrement", c.NoRetryIncrement},
	} {
		if int64(f.v) > maxQuota {
			return nil, invalid("QuotaConfig."+f.name, f.v, "at most 2^40 (0 is the default, a negative value zero)")
		}
	}
	return &Quota{
		configured:       true,
		capacity:         orDefault(c.Capacity, DefaultQuotaCapacity),
		retryCost:        orDefault(c.RetryCost, DefaultRetryCost),
		timeoutCost:      orDefault(c.TimeoutCost, DefaultTimeoutCost),
		throttleCost:     orDefault(c.ThrottleCost, DefaultThrottleCost),
		noRetryIncrement: orDefault(c.NoRetryIncrement, DefaultNoRetryIncrement),
	}, nil
}

// orDefault maps zero to def and a negative value to zero.
func orDefault(v, def int) int64 {
	switch {
	case v == 0:
		return int64(def)
	case v < 0:
		return 0
	}
	return int64(v)
}

func (q *Quota) capacityOf() int64 {
	if !q.configured {
		return DefaultQuotaCapacity
	}
	return q.capacity
}

// cost is what a retry for cause c is charged.
func (q *Quota) cost(c Cause) int64 {
	if !q.configured {
		switch c {
		case CauseTimeout:
			return DefaultTimeoutCost
		case CauseThrottle:
			return DefaultThrottleCost
		}
		return DefaultRetryCost
	}
	switch c {
	case CauseTimeout:
		return q.timeoutCost
	case CauseThrottle:
		return q.throttleCost
	}
	return q.retryCost
}

// AdmitAt reports whether a logical call may make its first attempt. The
// standard mode never delays or refuses first attempts, so it is always true.
// now is unused.
func (q *Quota) AdmitAt(now time.Time) bool { return true }

// RetryAt charges a retry the cost for cause c and reports true; or, if the
// balance is below that cost, charges nothing and reports false. now is
// unused.
func (q *Quota) RetryAt(now time.Time, cause Cause) bool {
	c := q.cost(cause)
	if c == 0 {
		return true
	}
	// A balance already below the cost refuses on a load, writing
	// nothing: in a retry storm, when every retry is refused, the quota's
	// line stays in every core's cache.
	capacity := q.capacityOf()
	if q.deficit.Load() > capacity-c {
		return false
	}
	// Otherwise charge first, then look: one atomic add, which unlike a
	// compare-and-swap never has to be retried when cores contend. A charge
	// the balance did not hold is taken back; until it is, a concurrent
	// retry may be refused that would have been granted a moment later.
	if q.deficit.Add(c) <= capacity {
		return true
	}
	for { // take it back, never below a full quota (refunds clamp there)
		d := q.deficit.Load()
		if q.deficit.CompareAndSwap(d, max(d-c, 0)) {
			return false
		}
	}
}

// RecordAt reports one attempt's outcome. Only a [Success] changes the
// balance: a retry's success refunds its cost, a first attempt's success
// puts back NoRetryIncrement, never above Capacity. now is unused.
func (q *Quota) RecordAt(now time.Time, o Outcome) {
	if o.Result != Success {
		return
	}
	d := q.deficit.Load()
	if d == 0 { // full: the healthy path writes nothing
		return
	}
	var r int64
	switch {
	case o.Attempt > 1:
		r = q.cost(o.After)
	case !q.configured:
		r = DefaultNoRetryIncrement
	default:
		r = q.noRetryIncrement
	}
	if r == 0 {
		return
	}
	for !q.deficit.CompareAndSwap(d, max(d-r, 0)) {
		if d = q.deficit.Load(); d == 0 {
			return
		}
	}
}

// Admit is shorthand for AdmitAt(time.Time{}).
func (q *Quota) Admit() bool { return q.AdmitAt(time.Time{}) }

// Retry is shorthand for RetryAt(time.Time{}, c).
func (q *Quota) Retry(c Cause) bool { return q.RetryAt(time.Time{}, c) }

// Record is shorthand for RecordAt(time.Time{}, o).
func (q *Quota) Record(o Outcome) { q.RecordAt(time.Time{}, o) }

// QuotaState is a snapshot of a [Quota], for tests and metrics.
type QuotaState struct {
	// Available is the balance, in [0, Capacity].
	Available int
	// Capacity is the most the quota holds.
	Capacity int
}

// State returns a snapshot of the quota.
func (q *Quota) State() QuotaState {
	c := q.capacityOf()
	d := min(q.deficit.Load(), c) // a charge being taken back may overshoot
	return QuotaState{Available: int(c - d), Capacity: int(c)}
}
