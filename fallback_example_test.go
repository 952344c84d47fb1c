package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
)

// errRetired stands for what a provider's SDK returns when a model has
// been retired: a 404 that a classifier marks with the code not_found.
var errRetired = recoil.Mark(errors.New("404 model_not_found"), recoil.StatusVerdict(404))

func ExampleDoTarget() {
	// One policy over two models: every attempt on either counts against
	// its three attempts, its budget and its deadline.
	models := &recoil.Policy{Fallback: &recoil.Fallback{Targets: []recoil.Target{
		{Name: "primary", Value: "model-2024"},
		{Name: "successor", Value: "model-2025"},
	}}}
	err := recoil.DoTarget(context.Background(), models, func(ctx context.Context, t *recoil.Target) error {
		fmt.Println("calling", t.Value)
		if t.Value == "model-2024" {
			return errRetired
		}
		return nil
	})
	fmt.Println("err:", err)
	// A later call passes the retired model over for a while.
	_ = recoil.DoTarget(context.Background(), models, func(ctx context.Context, t *recoil.Target) error {
		fmt.Println("next call:", t.Value)
		return nil
	})
	// Output:
	// calling model-2024
	// calling model-2025
	// err: <nil>
	// next call: model-2025
}

func ExampleGetTarget() {
	keys := &recoil.Policy{Fallback: &recoil.Fallback{Targets: []recoil.Target{
		{Name: "key-1", Value: "sk-revoked"}, {Name: "key-2", Value: "sk-good"},
	}}}
	answer, err := recoil.GetTarget(context.Background(), keys, func(ctx context.Context, t *recoil.Target) (string, error) {
		if t.Value == "sk-revoked" {
			return "", recoil.Mark(errors.New("401 invalid_api_key"), recoil.StatusVerdict(401))
		}
		return "answered with " + t.Name, nil
	})
	fmt.Println(answer, err)
	// Output: answered with key-2 <nil>
}

func ExampleFallback_Restore() {
	f := &recoil.Fallback{Targets: []recoil.Target{{Name: "key-1"}, {Name: "key-2"}}}
	p := &recoil.Policy{Fallback: f, Observe: func(_ context.Context, s recoil.Summary) { fmt.Println(s.Targets) }}
	revoked := true
	call := func() {
		_ = recoil.DoTarget(context.Background(), p, func(ctx context.Context, t *recoil.Target) error {
			if t.Name == "key-1" && revoked {
				return recoil.Mark(errors.New("401"), recoil.StatusVerdict(401))
			}
			return nil
		})
	}
	call() // key-1 is refused: out until restored
	call()
	fmt.Println(f.Status(time.Time{})[0].Out)
	revoked = false // the key was rotated
	f.Restore("key-1")
	call()
	// Output:
	// [key-1:1 (key refused) key-2:1]
	// [key-1:0 (out until restored) key-2:1]
	// true
	// [key-1:1]
}

func ExampleDefaultFallbackRule() {
	for _, status := range []int{400, 401, 404, 500, 529} {
		l := recoil.DefaultFallbackRule(recoil.StatusVerdict(status), recoil.DefaultCooldown)
		fmt.Printf("%d: move %v, cool %v (%s)\n", status, l.Move, l.Cool, l.Why)
	}
	// Output:
	// 400: move false, cool 0s ()
	// 401: move true, cool -1ns (key refused)
	// 404: move true, cool 10m0s (model not found)
	// 500: move false, cool 0s ()
	// 529: move true, cool 15s (overloaded)
}

func ExampleHedge() {
	// Race an attempt that has not answered within 50 ms with one copy of
	// it. The hedge is paid from the policy's retry budget and counts
	// against its three attempts.
	search := &recoil.Policy{
		Hedge: &recoil.Hedge{Delay: 50 * time.Millisecond},
		Observe: func(_ context.Context, s recoil.Summary) {
			fmt.Println(s.Attempts, "attempts,", s.Hedges, "hedge,", s.Wasted, "wasted")
		},
	}
	var calls atomic.Int32
	answer, err := recoil.Get(context.Background(), search, func(ctx context.Context) (string, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done() // the first attempt is stuck in the slow tail
			return "", ctx.Err()
		}
		return "found", nil
	})
	fmt.Println(answer, err)
	// Output:
	// 2 attempts, 1 hedge, 1 wasted
	// found <nil>
}
