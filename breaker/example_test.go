package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
)

func Example() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := breaker.Must(breaker.New(breaker.Settings{
		ConsecutiveFailures: 3,
		OpenDuration:        30 * time.Second,
		OnStateChange: func(from, to breaker.State, at time.Time) {
			fmt.Printf("%v: %s -> %s\n", at.Sub(start), from, to)
		},
	}))

	// The dependency fails three times in a row.
	for i := range 3 {
		now := start.Add(time.Duration(i) * time.Second)
		if b.AllowAt(now) {
			b.RecordAt(now, breaker.Failure)
		}
	}
	fmt.Println("10s allowed:", b.AllowAt(start.Add(10*time.Second)))

	// The open period ends at 32s: one probe goes, a second waits.
	fmt.Println("32s allowed:", b.AllowAt(start.Add(32*time.Second)))
	fmt.Println("32s second probe allowed:", b.AllowAt(start.Add(32*time.Second)))
	b.RecordAt(start.Add(33*time.Second), breaker.Success)
	fmt.Println(b.StateAt(start.Add(33 * time.Second)))
	// Output:
	// 2s: closed -> open
	// 10s allowed: false
	// 32s: open -> half-open
	// 32s allowed: true
	// 32s second probe allowed: false
	// 33s: half-open -> closed
	// closed
}

// A failure rate over a rolling window trips a breaker that sees failures
// interleaved with successes, which never make a run of consecutive ones.
func ExampleSettings_failureRate() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := breaker.Must(breaker.New(breaker.Settings{
		FailureRate: 0.5,              // trip at half the outcomes failing
		Window:      10 * time.Second, // over the last ten seconds
		MinRequests: 20,               // once there are twenty of them
	}))
	for i := range 40 {
		now := start.Add(time.Duration(i) * 100 * time.Millisecond)
		if !b.AllowAt(now) {
			fmt.Printf("refused attempt %d\n", i+1)
			break
		}
		o := breaker.Success
		if i%3 != 0 { // two failures in three
			o = breaker.Failure
		}
		b.RecordAt(now, o)
	}
	// Output:
	// refused attempt 21
}

// Zero Breaker is the usual breaker: five failures in a row open it for
// 30 seconds.
func ExampleBreaker_zero() {
	var b breaker.Breaker
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 14 { // a dependency down from the start: a run of 14 trips it
		if b.AllowAt(start) {
			b.RecordAt(start, breaker.Failure)
		}
	}
	c := b.CountsAt(start)
	fmt.Println(c.State, c.OpenUntil.Sub(start))
	// Output:
	// open 30s
}

// A breaker belongs to one dependency's Policy. Once it opens, calls fail
// fast with ErrCircuitOpen instead of adding load to a dependency that is
// down: the third call here never reaches the operation.
func ExampleNew() {
	ledger := &recoil.Policy{
		MaxAttempts: 1,
		Backoff:     backoff.None{},
		Breaker:     breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: 2, OpenDuration: time.Minute})),
	}
	for call := 1; call <= 3; call++ {
		reached := false
		err := recoil.Do(context.Background(), ledger, func(ctx context.Context) error {
			reached = true
			return errors.New("dial tcp 10.0.0.7:5432: connection refused")
		})
		fmt.Println(call, reached, errors.Is(err, recoil.ErrCircuitOpen))
	}
	// Output:
	// 1 true false
	// 2 true false
	// 3 false true
}

// New refuses Settings out of range with a *ConfigError naming the field.
func ExampleNew_error() {
	_, err := breaker.New(breaker.Settings{FailureRate: 50}) // a percentage where a fraction belongs
	var ce *breaker.ConfigError
	fmt.Println(errors.Is(err, breaker.ErrConfig), errors.As(err, &ce) && ce.Field == "Settings.FailureRate")
	fmt.Println(err)
	// Output:
	// true true
	// breaker: invalid configuration: Settings.FailureRate = 50: want 0 (off) to 1
}

// A slow-call rate trips a breaker on a dependency that still answers, but
// slowly: every call succeeds, and the breaker opens all the same once half
// of at least twenty calls in ten seconds took longer than five seconds.
func ExampleSettings_slowCallRate() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := breaker.Must(breaker.New(breaker.Settings{
		SlowCallRate:      0.5,             // trip at half the calls slow
		SlowCallThreshold: 5 * time.Second, // slower than 5 s
		MinRequests:       20,              // once there are twenty of them
	}))
	for i := range 40 {
		now := start.Add(time.Duration(i) * 100 * time.Millisecond)
		if !b.AllowAt(now) {
			fmt.Printf("refused attempt %d\n", i+1)
			break
		}
		latency := 2 * time.Second
		if i >= 10 { // the dependency slows down
			latency = 20 * time.Second
		}
		b.RecordLatencyAt(now, breaker.Success, latency)
	}
	// Output:
	// refused attempt 21
}

// RecordSlowAt marks as slow a call whose outcome was recorded when its
// response began: a stream whose tokens then came too slowly, say.
// recoilhttp.Transport reports slow streams this way.
func ExampleBreaker_RecordSlowAt() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := breaker.Must(breaker.New(breaker.Settings{SlowCallRate: 0.5, MinRequests: 4}))
	for i := range 4 {
		b.AllowAt(now)
		b.RecordAt(now, breaker.Success) // the headers arrived: a success
		if i%2 == 1 {
			b.RecordSlowAt(now) // ...and then the stream crawled
		}
	}
	c := b.CountsAt(now)
	fmt.Println(c.State, c.Requests, c.SlowCalls)
	// Output:
	// open 4 2
}
