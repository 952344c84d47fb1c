package budget_test

import (
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
	r := budget.NewRatio(budget.RatioConfig{MinRetriesPerSec: -1}) // no reserve, to show the share

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

	fmt.Println("retries a 2026-rules quota pays for:", 500/budget.Quota2026.RetryCost)
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
	a := budget.NewAdaptive(budget.AdaptiveConfig{Rand: rand.New(rand.NewPCG(1, 1))})

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
