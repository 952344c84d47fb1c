package budget_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/recoil-go/recoil/budget"
)

// A TokenBucket throttles retries once failures pass about one in ten
// successes (gRFC A6's example configuration, the zero value's defaults).
func ExampleTokenBucket() {
	var b budget.TokenBucket // full: 10 tokens

	for i := 1; i <= 5; i++ {
		b.Record(budget.Outcome{Attempt: 1, Result: budget.Failure})
		fmt.Printf("after %d failures: %.1f tokens, retry allowed: %v\n", i, b.State().Tokens, b.Retry(budget.CauseError))
	}
	b.Record(budget.Outcome{Attempt: 1, Result: budget.Success})
	fmt.Printf("after a success: %.1f tokens, retry allowed: %v\n", b.State().Tokens, b.Retry(budget.CauseError))
	// Output:
	// after 1 failures: 9.0 tokens, retry allowed: true
	// after 2 failures: 8.0 tokens, retry allowed: true
	// after 3 failures: 7.0 tokens, retry allowed: true
	// after 4 failures: 6.0 tokens, retry allowed: true
	// after 5 failures: 5.0 tokens, retry allowed: false
	// after a success: 5.1 tokens, retry allowed: true
}

// A Ratio allows retries of 20% of the last ten seconds' requests, plus a
// reserve of 10 a second (Finagle's defaults).
func ExampleRatio() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := budget.Must(budget.NewRatio(budget.RatioConfig{MinRetriesPerSec: -1})) // no reserve, to show the share

	for range 10 {
		r.AdmitAt(start) // each call's first attempt deposits 0.2 of a retry
	}
	granted := 0
	for r.RetryAt(start, budget.CauseError) {
		granted++
	}
	fmt.Println("retries after 10 requests:", granted)
	fmt.Println("balance ten seconds later:", r.StateAt(start.Add(10*time.Second)).Balance)

	var d budget.Ratio // the defaults: a reserve of 10/s × 10 s
	fmt.Println("default reserve:", d.StateAt(start).Reserve)
	// Output:
	// retries after 10 requests: 2
	// balance ten seconds later: 0
	// default reserve: 100
}

// A Quota charges each retry and refunds it when the retry succeeds (the AWS
// SDKs' standard retry mode).
func ExampleQuota() {
	var q budget.Quota // 500 tokens

	q.Retry(budget.CauseError)   // costs 5
	q.Retry(budget.CauseTimeout) // after a timeout: costs 10
	fmt.Println("after two retries:", q.State().Available)

	q.Record(budget.Outcome{Attempt: 2, Result: budget.Success, After: budget.CauseTimeout})
	fmt.Println("after the timeout retry succeeded:", q.State().Available)

	q.Record(budget.Outcome{Attempt: 1, Result: budget.Success})
	fmt.Println("after a first-attempt success:", q.State().Available)

	n := 0
	for q.Retry(budget.CauseError) {
		n++
	}
	fmt.Println("retries until exhausted:", n)

	fmt.Println("retries a 2026-rules quota pays for:", 500/budget.Quota2026().RetryCost)
	// Output:
	// after two retries: 485
	// after the timeout retry succeeded: 495
	// after a first-attempt success: 496
	// retries until exhausted: 99
	// retries a 2026-rules quota pays for: 35
}

// An Adaptive throttle refuses attempts locally, first attempts included,
// as the backend rejects more of them (the SRE book's client-side
// throttling).
func ExampleAdaptive() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := budget.Must(budget.NewAdaptive(budget.AdaptiveConfig{Rand: rand.New(rand.NewPCG(1, 1))}))

	// 100 attempts, of which the backend accepted 30.
	for i := range 100 {
		a.AdmitAt(start)
		r := budget.Overload
		if i < 30 {
			r = budget.Success
		}
		a.RecordAt(start, budget.Outcome{Attempt: 1, Result: r})
	}
	fmt.Printf("reject probability: %.4f = (100 - 2·30)/101\n", a.RejectProbabilityAt(start))
	fmt.Printf("two minutes later: %.4f\n", a.RejectProbabilityAt(start.Add(2*time.Minute)))
	// Output:
	// reject probability: 0.3960 = (100 - 2·30)/101
	// two minutes later: 0.0000
}

// A small bucket for a dependency that should rarely see retries: four
// tokens, and retries stop once the balance is down to half of them. Each
// success puts back half a token.
func ExampleNewTokenBucket() {
	b := budget.Must(budget.NewTokenBucket(budget.TokenBucketConfig{MaxTokens: 4, TokenRatio: 0.5}))
	b.Record(budget.Outcome{Attempt: 1, Result: budget.Failure})
	fmt.Println(b.State().Tokens, b.Retry(budget.CauseError))
	b.Record(budget.Outcome{Attempt: 1, Result: budget.Failure})
	fmt.Println(b.State().Tokens, b.Retry(budget.CauseError))
	b.Record(budget.Outcome{Attempt: 1, Result: budget.Success})
	fmt.Println(b.State().Tokens, b.Retry(budget.CauseError))
	// Output:
	// 3 true
	// 2 false
	// 2.5 true
}

// Under the AWS SDKs' 2026 rules a retry after throttling costs less than
// one after an error, so a throttled dependency can be retried more often
// before the quota runs dry.
func ExampleNewQuota() {
	for _, cause := range []budget.Cause{budget.CauseError, budget.CauseThrottle} {
		q := budget.Must(budget.NewQuota(budget.Quota2026()))
		n := 0
		for q.Retry(cause) {
			n++
		}
		fmt.Println(cause == budget.CauseThrottle, n)
	}
	// Output:
	// false 35
	// true 100
}

// A Ratio with only a reserve — no share of requests — allows a fixed
// number of retries per TTL however little traffic there is: here 2 a
// second over 5 s, so 10, which come back once the TTL has passed.
func ExampleNewRatio() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := budget.Must(budget.NewRatio(budget.RatioConfig{TTL: 5 * time.Second, MinRetriesPerSec: 2, Percent: -1}))
	granted := 0
	for r.RetryAt(start, budget.CauseError) {
		granted++
	}
	fmt.Println("granted:", granted)
	fmt.Println("balance 5s later:", r.StateAt(start.Add(5*time.Second)).Balance)
	// Output:
	// granted: 10
	// balance 5s later: 10
}

// K sets how hard the throttle pushes back: with the same history — the
// backend accepted 30 of 100 attempts — a K of 1.1 refuses far more
// attempts locally than the default of 2.
func ExampleNewAdaptive() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, k := range []float64{2, 1.1} {
		a := budget.Must(budget.NewAdaptive(budget.AdaptiveConfig{K: k, Rand: rand.New(rand.NewPCG(1, 1))}))
		for i := range 100 {
			a.AdmitAt(start)
			r := budget.Overload
			if i%10 < 3 {
				r = budget.Success
			}
			a.RecordAt(start, budget.Outcome{Attempt: 1, Result: r})
		}
		fmt.Printf("K=%v: reject %.2f\n", k, a.RejectProbabilityAt(start))
	}
	// Output:
	// K=2: reject 0.40
	// K=1.1: reject 0.66
}

// The constructors refuse a configuration out of range with a *ConfigError
// naming the field. A configuration read at run time is checked this way;
// Must is for literals.
func ExampleNewTokenBucket_error() {
	_, err := budget.NewTokenBucket(budget.TokenBucketConfig{MaxTokens: 5000})
	var ce *budget.ConfigError
	fmt.Println(errors.Is(err, budget.ErrConfig), errors.As(err, &ce) && ce.Field == "TokenBucketConfig.MaxTokens")
	fmt.Println(err)
	// Output:
	// true true
	// budget: invalid configuration: TokenBucketConfig.MaxTokens = 5000: want 0 (the default) to 1000
}

// A process that calls a model API alone holds itself under the provider's
// 30,000 tokens a minute: each attempt is charged its estimated tokens, the
// charge is settled by what the response reports, and the provider's
// headers (here: 2,000 left, the reset 10 s away) pace what remains.
func ExampleRate() {
	r := budget.Must(budget.NewRate(budget.RateConfig{Limit: 30_000}))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	fmt.Println(r.AdmitNAt(now, 1500)) // estimated: prompt and max_tokens
	r.SettleAt(now, 1500, 700)         // the response's usage: 700
	fmt.Println(r.StateAt(now).Available)

	r.LearnAt(now, 30_000, 2000, 10*time.Second) // 2000·1 min < 30,000·10 s: pace
	fmt.Println(r.AdmitNAt(now, 500), r.AdmitNAt(now, 500), r.AdmitNAt(now.Add(2500*time.Millisecond), 500))
	// Output:
	// true
	// 29300
	// true false true
}

// A Share lets retries be at most a fifth of the attempts that succeed,
// plus a reserve of 10 (the zero value's defaults): recoil's default
// budget. Against a dependency that is down only the reserve retries;
// successes pay for more.
func ExampleShare() {
	var b budget.Share // full: 10 retries

	granted := 0
	for b.Retry(budget.CauseError) {
		granted++
	}
	fmt.Printf("down: %d retries, then refused\n", granted)
	for i := 1; i <= 5; i++ {
		b.Record(budget.Outcome{Attempt: 1, Result: budget.Success})
	}
	fmt.Printf("after 5 successes: %.1f retries, retry allowed: %v\n", b.State().Retries, b.Retry(budget.CauseError))
	// Output:
	// down: 10 retries, then refused
	// after 5 successes: 1.0 retries, retry allowed: true
}

// NewShare sets the share and the reserve; a Background path might allow
// fewer retries than an interactive one.
func ExampleNewShare() {
	b := budget.Must(budget.NewShare(budget.ShareConfig{Percent: 0.1, Reserve: 20}))
	fmt.Printf("%+v\n", b.State())
	// Output:
	// {Retries:20 Reserve:20 Percent:0.1}
}
