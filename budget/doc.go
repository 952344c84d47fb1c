// Package budget bounds how many retries a client makes, so that retries
// cannot multiply the load on a dependency that is already failing.
//
// Backoff spreads retries out in time and jitter de-synchronises them, but
// neither reduces their number; a retry budget is what caps retries as a
// share of the traffic that is succeeding, and refuses them when it runs out.
// Share one budget between all the calls to one dependency.
//
// Five budgets:
//
//   - [Share]: retries are at most a share (20 %) of the attempts that
//     succeed, plus a reserve of 10. Successes pay for retries, so every
//     retry of a failure rate up to about 17 % goes, and the budget closes
//     as the dependency stops answering. No clock; the healthy path is one
//     atomic load. recoil's default.
//   - [TokenBucket]: gRPC's retryThrottling (gRFC A6). Failures drain a
//     token, successes refill a fraction of one; retries stop while the
//     bucket is at or below half, near a 9 % failure rate at A6's example
//     settings. No clock; the healthy path is one atomic load.
//   - [Ratio]: Finagle's RetryBudget, also Linkerd's. Retries may be at most
//     Percent of the requests of the last TTL, plus a reserve of
//     MinRetriesPerSec·TTL.
//   - [Quota]: the retry quota of the AWS SDKs' standard retry mode. Retries
//     cost tokens (timeouts cost more, throttling less under the 2026
//     rules), successful retries refund them,
//     successful first attempts add one.
//   - [Adaptive]: client-side adaptive throttling from the Google SRE book.
//     It refuses attempts, first ones included, with a probability that grows
//     as the backend rejects more of them.
//
// Beside them, [Rate] is a rate limit rather than a retry budget: a token
// bucket of a provider's tokens (or requests) per minute, charged before
// every attempt by its cost (recoil.CostBudget: AdmitNAt, RetryNAt), settled
// by what the response reports (SettleAt), and paced by what the provider's
// headers say remains (LearnAt). It is the one-process counterpart of
// package fleet's Allowance.
//
// Each implements the Budget interface of package recoil:
//
//	AdmitAt(now time.Time) bool           // before a call's first attempt
//	RetryAt(now time.Time, c Cause) bool  // before a retry; true means charged
//	RecordAt(now time.Time, o Outcome)    // after every attempt
//
// with the shorthands Admit, Retry and Record for the current time. The zero
// time.Time passed as now means "the current time": budgets that need no
// clock (Share, TokenBucket, Quota) never read it, those that do (Ratio, Adaptive)
// call time.Now. Pass explicit instants to simulate or test.
//
// Every budget's zero value is ready to use with its published defaults, and
// each has a Config struct whose zero fields mean those defaults; where zero
// is itself a meaningful setting (a cost, a share, a reserve), a negative
// value asks for zero. The constructors (NewShare, NewTokenBucket, NewRatio,
// NewQuota, NewAdaptive) return an error for a field out of range, a *[ConfigError]
// wrapping [ErrConfig] that names the field, and never panic; [Must] turns
// the error into a panic where the configuration is a literal. Every
// budget is safe for concurrent use, and has a State method returning a
// snapshot for tests and metrics.
//
// # Usage
//
// The retry loop in package recoil drives a budget; to drive one by hand:
//
//	var b budget.Share // one per dependency, shared
//
//	func call(ctx context.Context) error {
//		if !b.Admit() {
//			return errThrottled
//		}
//		for attempt := 1; ; attempt++ {
//			err := do(ctx)
//			b.Record(budget.Outcome{Attempt: attempt, Result: classify(err)})
//			if err == nil || !retryable(err) || attempt == maxAttempts {
//				return err
//			}
//			if !b.Retry(budget.CauseError) {
//				return err // budget exhausted: fail fast
//			}
//			// back off, then go round again
//		}
//	}
//
// The attempt a retry makes should be recorded with [Outcome.After] set to
// the cause the retry was charged for, so that [Quota] refunds what it took.
package budget
