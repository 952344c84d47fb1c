package limit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/limit"
)

func ExampleLimiter() {
	lim := limit.Must(limit.New(limit.Config{Capacity: 2}))
	ctx := context.Background()

	for i := 1; i <= 3; i++ {
		err := lim.Acquire(ctx) // nobody releases in this example
		fmt.Printf("call %d: %v\n", i, err)
	}
	fmt.Println("in use:", lim.InUse())

	lim.Release()
	fmt.Println("after release:", lim.TryAcquire())
	fmt.Printf("%+v\n", lim.Stats())
	// Output:
	// call 1: <nil>
	// call 2: <nil>
	// call 3: limit: full, shed
	// in use: 2
	// after release: true
	// {InUse:2 Queued:0 Acquired:3 Waited:0 Shed:1 TimedOut:0 Canceled:0}
}

func ExampleGroup() {
	// Four shared workers, at most two of them for any one endpoint.
	g := limit.Must(limit.NewGroup(limit.GroupConfig{Capacity: 4, PerKey: 2}))
	ctx := context.Background()

	for range 3 {
		err := g.Acquire(ctx, "/v1/broken")
		fmt.Println("broken:", err, errors.Is(err, limit.ErrFull))
	}
	for range 2 {
		fmt.Println("healthy:", g.Acquire(ctx, "/v1/healthy"))
	}
	fmt.Printf("%+v\n", g.KeyStats("/v1/broken"))
	// Output:
	// broken: <nil> false
	// broken: <nil> false
	// broken: limit: key full, shed true
	// healthy: <nil>
	// healthy: <nil>
	// {InUse:2 Shed:1}
}

// A limiter in a dependency's Policy holds a slot for the length of one
// attempt. With one slot and no queue, a call that arrives while an attempt
// is running is shed with recoil.ErrLimit instead of piling on.
func ExampleNew() {
	reports := &recoil.Policy{Limiter: limit.Must(limit.New(limit.Config{Capacity: 1}))}
	ctx := context.Background()
	err := recoil.Do(ctx, reports, func(ctx context.Context) error {
		// A second call while this attempt holds the only slot.
		err := recoil.Do(ctx, reports, func(context.Context) error { return nil })
		fmt.Println("second call shed:", errors.Is(err, recoil.ErrLimit))
		return nil
	})
	fmt.Println("first call:", err)
	// Output:
	// second call shed: true
	// first call: <nil>
}

// A group that tracks two tenants on their own: later tenants share one
// overflow key, capped like any other at PerKey (here the default,
// Capacity/2 = 3).
func ExampleNewGroup() {
	g := limit.Must(limit.NewGroup(limit.GroupConfig{Capacity: 6, MaxKeys: 2}))
	ctx := context.Background()
	for _, tenant := range []string{"acme", "globex", "initech", "initech", "umbrella", "umbrella"} {
		err := g.Acquire(ctx, tenant)
		fmt.Println(tenant, err)
	}
	// Output:
	// acme <nil>
	// globex <nil>
	// initech <nil>
	// initech <nil>
	// umbrella <nil>
	// umbrella limit: key full, shed
}

// New refuses a configuration out of range with a *ConfigError naming the
// field; Must turns the refusal into a panic for a literal configuration.
func ExampleNew_error() {
	_, err := limit.New(limit.Config{Capacity: -1})
	var ce *limit.ConfigError
	fmt.Println(errors.Is(err, limit.ErrConfig), errors.As(err, &ce) && ce.Field == "Config.Capacity")
	fmt.Println(err)
	// Output:
	// true true
	// limit: invalid configuration: Config.Capacity = -1: want 0 to 2147483647
}

// An Adaptive limiter driven by hand on a clock of its own. A window
// closes when an attempt ends a second or more after it opened, and moves
// the limit: a fifth lower for a window with an overload signal in it, √limit
// higher for a window of busy, healthy traffic.
func ExampleAdaptive() {
	a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 10}))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for s, timeouts := range []bool{true, true, true, false, false, false} {
		n := 0
		for a.TryAcquire() { // fill the limit
			n++
		}
		now = now.Add(time.Second)
		for range n {
			latency := time.Second
			if timeouts {
				latency = 10 * time.Second
			}
			a.ReleaseAt(now, latency, timeouts)
		}
		fmt.Printf("second %d, timeouts %v: limit %d\n", s+1, timeouts, a.Limit())
	}
	// Output:
	// second 1, timeouts true: limit 10
	// second 2, timeouts true: limit 8
	// second 3, timeouts true: limit 6
	// second 4, timeouts false: limit 5
	// second 5, timeouts false: limit 7
	// second 6, timeouts false: limit 10
}

func ExampleNewAdaptive() {
	_, err := limit.NewAdaptive(limit.AdaptiveConfig{Min: 50, Max: 10})
	fmt.Println(err)
	var ce *limit.ConfigError
	fmt.Println(errors.Is(err, limit.ErrConfig), errors.As(err, &ce) && ce.Field == "AdaptiveConfig.Min")
	// Output:
	// limit: invalid configuration: AdaptiveConfig.Min = 50: want at most Max
	// true true
}

// With the queue full, an interactive caller takes the place of the newest
// background waiter, which is shed.
func ExampleAdaptive_AcquireAs() {
	a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 1, Max: 1, MaxQueue: 1}))
	a.TryAcquire() // the one slot is held
	shed := make(chan error)
	go func() { shed <- a.AcquireAs(context.Background(), limit.Background, true) }()
	for a.Queued() == 0 {
		runtime.Gosched()
	}
	got := make(chan error)
	go func() { got <- a.AcquireAs(context.Background(), limit.Interactive, false) }()
	fmt.Println("background retry:", <-shed)
	a.Release() // the slot passes to the interactive caller
	fmt.Println("interactive:", <-got)
	// Output:
	// background retry: limit: full, shed
	// interactive: <nil>
}

// The fixed Limiter queues by priority as the adaptive one does: with the
// queue full, an interactive caller takes the place of the newest
// background waiter, which is shed.
func ExampleLimiter_AcquireAs() {
	l := limit.Must(limit.New(limit.Config{Capacity: 1, MaxQueue: 1}))
	l.TryAcquire() // the one slot is held
	shed := make(chan error)
	go func() { shed <- l.AcquireAs(context.Background(), limit.Background, true) }()
	for l.Queued() == 0 {
		runtime.Gosched()
	}
	got := make(chan error)
	go func() { got <- l.AcquireAs(context.Background(), limit.Interactive, false) }()
	fmt.Println("background retry:", <-shed)
	l.Release() // the slot passes to the interactive caller
	fmt.Println("interactive:", <-got)
	l.Release()
	// Output:
	// background retry: limit: full, shed
	// interactive: <nil>
}
