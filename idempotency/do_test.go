package idempotency_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/recoil-go/recoil/idempotency"
)

type charge struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
}

func TestDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
		var runs atomic.Int64
		charge1 := func(ctx context.Context) (charge, error) {
			runs.Add(1)
			return charge{ID: "ch_1", Amount: 100}, nil
		}
		for range 3 {
			c, err := idempotency.Do(ctx, s, "step-1", charge1)
			if err != nil || c != (charge{"ch_1", 100}) {
				t.Fatalf("Do = %+v, %v", c, err)
			}
		}
		if runs.Load() != 1 {
			t.Fatalf("runs = %d, want 1", runs.Load())
		}
		// A failure stores nothing: the next call runs again.
		fails := errors.New("the tool failed before acting")
		if _, err := idempotency.Do(ctx, s, "step-2", func(context.Context) (int, error) { return 0, fails }); !errors.Is(err, fails) {
			t.Fatalf("Do = %v, want fn's error", err)
		}
		if v, err := idempotency.Do(ctx, s, "step-2", func(context.Context) (int, error) { return 2, nil }); v != 2 || err != nil {
			t.Fatalf("Do after a failure = %d, %v; want a new run", v, err)
		}
		// While one call holds the key, another is refused at once.
		hold := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			_, _ = idempotency.Do(ctx, s, "step-3", func(ctx context.Context) (int, error) {
				if _, ok := idempotency.ClaimFrom(ctx); !ok {
					t.Error("fn's context carries no claim")
				}
				<-hold
				return 3, nil
			})
		})
		synctest.Wait()
		_, err := idempotency.Do(ctx, s, "step-3", func(context.Context) (int, error) { return -1, nil })
		var ip *idempotency.InProgressError
		if !errors.As(err, &ip) || !errors.Is(err, idempotency.ErrInProgress) || ip.RetryIn != idempotency.DefaultLease {
			t.Fatalf("Do while held = %v, want an *InProgressError with the lease's remainder", err)
		}
		close(hold)
		wg.Wait()
	})
}

func TestDoDefaultStore(t *testing.T) {
	var runs int
	for range 2 {
		if _, err := idempotency.Do(context.Background(), nil, "default-store-"+t.Name(), func(context.Context) (bool, error) { runs++; return true, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if runs != 1 {
		t.Fatalf("runs = %d, want 1 with the process-wide store", runs)
	}
}

func TestDoStoreFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
		st := &failing{Store: mem, complete: true}
		v, err := idempotency.Do(context.Background(), st, "k", func(context.Context) (int, error) { return 1, nil })
		if v != 1 || !errors.Is(err, errDown) {
			t.Fatalf("Do with a store that cannot complete = %d, %v; want fn's result and the store's error", v, err)
		}
	})
}
