package limit_test

import (
	"context"
	"errors"
	"fmt"

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
