package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/limit"
)

// An adaptive limiter as a policy's Limiter: the loop times every attempt
// and gives its slot back with ReleaseAt, an overloaded answer as an
// overload signal.
func ExampleLatencyLimiter() {
	a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 4, Window: time.Nanosecond}))
	var _ recoil.LatencyLimiter = a
	p := &recoil.Policy{Limiter: a, MaxAttempts: 1}
	overloaded := recoil.Mark(errors.New("529 overloaded"), recoil.StatusVerdict(529))
	for range 3 {
		_ = recoil.Do(context.Background(), p, func(context.Context) error { return overloaded })
	}
	fmt.Println("limit after three overloaded attempts:", a.Limit())
	// Output:
	// limit after three overloaded attempts: 2
}

// slowLog is a Breaker that also wants each attempt's latency.
type slowLog struct{}

func (slowLog) AllowAt(time.Time) bool              { return true }
func (slowLog) RecordAt(time.Time, breaker.Outcome) {}
func (slowLog) RecordLatencyAt(_ time.Time, o breaker.Outcome, latency time.Duration) {
	fmt.Println("answered; slow:", latency >= 0 && o == breaker.Success) // a slow-call breaker compares latency with its threshold
}

// A breaker that is a LatencyBreaker hears each answered attempt's
// latency with its outcome.
func ExampleLatencyBreaker() {
	var b recoil.LatencyBreaker = slowLog{}
	p := &recoil.Policy{Breaker: b}
	_ = recoil.Do(context.Background(), p, func(context.Context) error { return nil })
	// Output:
	// answered; slow: true
}

// Calls take their priority from the context, else from the policy: a
// batch job's policy is Background(), and a handler serving a person can
// mark its context interactive whatever policy it shares.
func ExampleWithPriority() {
	a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 10, Reserve: 0.3}))
	var _ recoil.PriorityLimiter = a
	batch := recoil.Background() // Priority: PriorityBackground
	batch.Limiter = a
	held := 0
	for range 10 { // background calls hold their share, limit × (1 − 0.3)
		if a.TryAcquireAs(batch.Priority, false) {
			held++
		}
	}
	ctx := recoil.WithPriority(context.Background(), recoil.PriorityInteractive)
	err := recoil.Do(ctx, batch, func(context.Context) error { return nil })
	fmt.Println("background slots held:", held, "· an interactive call still goes:", err == nil)
	err = recoil.Do(context.Background(), batch, func(context.Context) error { return nil })
	fmt.Println("another background call:", err)
	// Output:
	// background slots held: 7 · an interactive call still goes: true
	// another background call: recoil: concurrency limit after 0 attempts: limit: full, shed
}
