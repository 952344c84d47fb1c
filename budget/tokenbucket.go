package budget

import (
	"math"
	"sync/atomic"
	"time"
)

// Defaults of [TokenBucketConfig].
//
// gRFC A6 ("gRPC Retry Design", section "Throttling Retry Attempts and Hedged
// RPCs") makes retryThrottling opt-in and gives no default; its one worked
// example is {"maxTokens": 10, "tokenRatio": 0.1}, which throttles retries
// once failures exceed about one in ten successes. recoil's default policy
// uses that example as its budget, so these are its defaults.
const (
	// DefaultMaxTokens is the bucket's capacity and starting balance.
	DefaultMaxTokens = 10
	// DefaultTokenRatio is what one successful attempt puts back.
	DefaultTokenRatio = 0.1
)

// maxMaxTokens is the largest capacity gRPC accepts: grpc-go rejects a
// service config whose maxTokens is outside (0, 1000].
const maxMaxTokens = 1000

// milli is the fixed-point scale of [TokenBucket]: a token is 1000
// milli-tokens. A6 supports tokenRatio "up to 3 decimal places", and gRPC
// core's retry throttle keeps milli-tokens in an atomic for the same reason.
const milli = 1000

// TokenBucketConfig configures a [TokenBucket]. The zero value of each field
// means its default.
type TokenBucketConfig struct {
	// MaxTokens is the capacity of the bucket and its starting balance
	// (A6 maxTokens). Zero means [DefaultMaxTokens]. It is kept to three
	// decimal places, and is at least 0.001. NewTokenBucket refuses a
	// negative value, NaN, and one above 1000, the bound grpc-go enforces.
	MaxTokens float64
	// TokenRatio is what each successful attempt puts back (A6 tokenRatio).
	// Zero means [DefaultTokenRatio]. It is rounded to three decimal places,
	// as A6 specifies, and is at least 0.001; values above 1000 mean 1000
	// (a success refills the largest bucket). NewTokenBucket refuses a
	// negative value, NaN and +Inf.
	TokenRatio float64
}

// TokenBucket is gRPC's retry throttle, from gRFC A6 ("retryThrottling"):
// one bucket per dependency, holding between 0 and MaxTokens tokens, starting
// full.
//
//   - Every attempt recorded as [Failure] or [Overload] takes one token
//     (A6: "every failed RPC will decrement the token_count by 1"; only
//     retryable failures and pushback count, and those are the results that
//     map here).
//   - Every attempt recorded as [Success] puts back TokenRatio tokens.
//   - [Permanent] and [Ignored] change nothing. A6 counts only retryable
//     failures "to avoid conflating server failure with responses to
//     malformed requests", and a permanent answer is not a success either.
//   - A retry may go only while the balance is above MaxTokens/2
//     (A6: "if token_count is less than or equal to the threshold, defined
//     to be (maxTokens / 2), then RPCs will not be retried").
//
// The failure has already paid, so [TokenBucket.RetryAt] only reads the
// balance; it never withdraws. First attempts are never refused.
//
// Balances are fixed-point (thousandths of a token) in one atomic integer.
// No method reads the clock. Recording a success while the bucket is full,
// and a failure while it is empty, is a single atomic load with no write, so
// the healthy path does not contend for the cache line.
//
// The zero value is a full bucket with the defaults ([DefaultMaxTokens],
// [DefaultTokenRatio]). A TokenBucket is safe for concurrent use and must not
// be copied after first use.
type TokenBucket struct {
	// deficit is MaxTokens minus the balance, in milli-tokens, in
	// [0, maxMilli]. Keeping the deficit rather than the balance makes the
	// zero value a full bucket.
	deficit atomic.Int64
	// maxMilli and ratioMilli are set by NewTokenBucket and never change;
	// zero means the defaults.
	maxMilli   int64
	ratioMilli int64
}

// NewTokenBucket returns a full [TokenBucket] configured by c; zero fields
// mean their defaults. It refuses, with a *[ConfigError] wrapping
// [ErrConfig]:
//
//   - MaxTokens below 0, above 1000, or NaN;
//   - TokenRatio below 0, +Inf, or NaN.
func NewTokenBucket(c TokenBucketConfig) (*TokenBucket, error) {
	switch {
	case !(c.MaxTokens >= 0 && c.MaxTokens <= maxMaxTokens): // true for NaN
		return nil, invalid("TokenBucketConfig.MaxTokens", c.MaxTokens, "0 (the default) to 1000")
	case !(c.TokenRatio >= 0) || math.IsInf(c.TokenRatio, 1):
		return nil, invalid("TokenBucketConfig.TokenRatio", c.TokenRatio, "0 (the default) or a finite number above it")
	}
	m := DefaultMaxTokens * milli
	if c.MaxTokens > 0 {
		m = max(int(math.Round(c.MaxTokens*milli)), 1)
	}
	r := int(DefaultTokenRatio * milli)
	if c.TokenRatio > 0 {
		r = max(int(math.Round(min(c.TokenRatio, maxMaxTokens)*milli)), 1)
	}
	return &TokenBucket{maxMilli: int64(m), ratioMilli: int64(r)}, nil
}

// limits returns the capacity and the refill per success, in milli-tokens.
func (b *TokenBucket) limits() (maxMilli, ratioMilli int64) {
	if b.maxMilli == 0 {
		return DefaultMaxTokens * milli, DefaultTokenRatio * milli
	}
	return b.maxMilli, b.ratioMilli
}

// AdmitAt reports whether a logical call may make its first attempt. A6
// throttles only retries and hedges, so it is always true. now is unused.
func (b *TokenBucket) AdmitAt(now time.Time) bool { return true }

// RetryAt reports whether a retry may go: whether the balance is above half
// the capacity (A6's threshold). It withdraws nothing, because the failed
// attempt already took its token when it was recorded. now and the cause are
// unused.
func (b *TokenBucket) RetryAt(now time.Time, c Cause) bool {
	m, _ := b.limits()
	return 2*(m-b.deficit.Load()) > m
}

// RecordAt reports one attempt's outcome: [Failure] and [Overload] take a
// token, [Success] puts back TokenRatio, anything else changes nothing. The
// balance stays within [0, MaxTokens]. now is unused.
func (b *TokenBucket) RecordAt(now time.Time, o Outcome) {
	switch o.Result {
	case Success:
		d := b.deficit.Load()
		if d == 0 { // full: the healthy path writes nothing
			return
		}
		_, r := b.limits()
		for !b.deficit.CompareAndSwap(d, max(d-r, 0)) {
			if d = b.deficit.Load(); d == 0 {
				return
			}
		}
	case Failure, Overload:
		m, _ := b.limits()
		d := b.deficit.Load()
		if d >= m { // empty: nothing left to take
			return
		}
		for !b.deficit.CompareAndSwap(d, min(d+milli, m)) {
			if d = b.deficit.Load(); d >= m {
				return
			}
		}
	}
}

// Full reports whether the bucket holds all its tokens, so that recording a
// success would change nothing. It is one atomic load, for a caller that
// skips the call on the healthy path.
func (b *TokenBucket) Full() bool { return b.deficit.Load() == 0 }

// Admit is shorthand for AdmitAt(time.Time{}).
func (b *TokenBucket) Admit() bool { return b.AdmitAt(time.Time{}) }

// Retry is shorthand for RetryAt(time.Time{}, c).
func (b *TokenBucket) Retry(c Cause) bool { return b.RetryAt(time.Time{}, c) }

// Record is shorthand for RecordAt(time.Time{}, o).
func (b *TokenBucket) Record(o Outcome) { b.RecordAt(time.Time{}, o) }

// TokenBucketState is a snapshot of a [TokenBucket], for tests and metrics.
type TokenBucketState struct {
	// Tokens is the balance, in [0, MaxTokens], to three decimal places.
	Tokens float64
	// MaxTokens is the capacity.
	MaxTokens float64
	// TokenRatio is what a success puts back.
	TokenRatio float64
	// RetryAllowed reports whether Tokens is above MaxTokens/2, that is,
	// whether RetryAt would say yes.
	RetryAllowed bool
}

// State returns a snapshot of the bucket.
func (b *TokenBucket) State() TokenBucketState {
	m, r := b.limits()
	t := m - b.deficit.Load()
	return TokenBucketState{
		Tokens:       float64(t) / milli,
		MaxTokens:    float64(m) / milli,
		TokenRatio:   float64(r) / milli,
		RetryAllowed: 2*t > m,
	}
}
