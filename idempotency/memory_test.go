package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/idempotency/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		s, err := idempotency.NewMemory(idempotency.MemoryConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// finished returns a Memory store keeping keys an hour, with key k
// finished.
func finished(k string) *idempotency.Memory {
	s, _ := idempotency.NewMemory(idempotency.MemoryConfig{Retention: time.Hour})
	b, _ := s.Begin(context.Background(), "", k, "fp", time.Minute)
	_ = s.Complete(context.Background(), "", k, b.Token, &idempotency.Response{Status: 200})
	return s
}

func TestMemoryRetentionAndReap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := finished("done")
		_, _ = s.Begin(ctx, "", "running", "fp", time.Minute)
		for _, tt := range []struct {
			at        time.Duration
			reaped    int
			len       int
			doneState idempotency.State
		}{
			{30 * time.Second, 0, 2, idempotency.StateDone},
			{2 * time.Minute, 1, 1, idempotency.StateDone}, // the lease ran out
			{2 * time.Hour, 1, 0, idempotency.StateNew},    // the retention ran out
		} {
			if n, err := s.Reap(ctx, time.Now().Add(tt.at)); n != tt.reaped || err != nil || s.Len() != tt.len {
				t.Fatalf("Reap(+%v) = %d, %v, leaving %d; want %d, leaving %d", tt.at, n, err, s.Len(), tt.reaped, tt.len)
			}
		}
		if b, _ := s.Begin(ctx, "", "done", "fp", time.Minute); b.State != idempotency.StateNew {
			t.Fatalf("after the retention: %v, want new", b.State)
		}
	})
}

func TestMemoryExpiresWhenMet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := finished("k")
		time.Sleep(59 * time.Minute)
		if b, _ := s.Begin(ctx, "", "k", "fp", time.Minute); b.State != idempotency.StateDone {
			t.Fatalf("within the retention: %v", b.State)
		}
		time.Sleep(time.Minute)
		if b, _ := s.Begin(ctx, "", "k", "other", time.Minute); b.State != idempotency.StateNew {
			t.Fatalf("at the retention's end: %v, want new", b.State)
		}
	})
}

func TestMemoryBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, _ := idempotency.NewMemory(idempotency.MemoryConfig{MaxEntries: 3})
		finish := func(k string) {
			b, err := s.Begin(ctx, "", k, "fp", time.Minute)
			if err != nil || b.State != idempotency.StateNew {
				t.Fatalf("Begin(%s) = %+v, %v", k, b, err)
			}
			_ = s.Complete(ctx, "", k, b.Token, &idempotency.Response{Status: 200})
		}
		finish("a")
		finish("b")
		_, _ = s.Begin(ctx, "", "a", "fp", time.Minute) // a is used again: b is now the least recent
		finish("c")
		finish("d") // evicts b
		if s.Len() != 3 {
			t.Fatalf("Len = %d, want the bound, 3", s.Len())
		}
		for k, want := range map[string]idempotency.State{"a": idempotency.StateDone, "c": idempotency.StateDone, "d": idempotency.StateDone} {
			if b, _ := s.Begin(ctx, "", k, "fp", time.Minute); b.State != want {
				t.Fatalf("%s: %v, want %v", k, b.State, want)
			}
		}
		// Running keys are never evicted: a store full of them refuses.
		full, _ := idempotency.NewMemory(idempotency.MemoryConfig{MaxEntries: 2})
		_, _ = full.Begin(ctx, "", "r1", "fp", time.Minute)
		_, _ = full.Begin(ctx, "", "r2", "fp", time.Minute)
		if _, err := full.Begin(ctx, "", "r3", "fp", time.Minute); !errors.Is(err, idempotency.ErrFull) {
			t.Fatalf("Begin on a store full of running keys = %v, want ErrFull", err)
		}
		time.Sleep(time.Minute) // r1's and r2's leases run out
		if b, err := full.Begin(ctx, "", "r3", "fp", time.Minute); err != nil || b.State != idempotency.StateNew {
			t.Fatalf("after the leases: %+v, %v", b, err)
		}
	})
}

func TestNewMemoryRejects(t *testing.T) {
	for _, cfg := range []idempotency.MemoryConfig{{MaxEntries: -1}, {Retention: -1}} {
		if _, err := idempotency.NewMemory(cfg); err == nil {
			t.Errorf("NewMemory(%+v): no error", cfg)
		}
	}
}

func TestRunReaper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := idempotency.NewMemory(idempotency.MemoryConfig{Retention: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- idempotency.RunReaper(ctx, 10*time.Second, s, nil) }()
		b, _ := s.Begin(ctx, "", "k", "fp", time.Minute)
		_ = s.Complete(ctx, "", "k", b.Token, &idempotency.Response{Status: 200})
		time.Sleep(55 * time.Second)
		if s.Len() != 1 {
			t.Fatalf("Len at +55s = %d, want 1: within the retention", s.Len())
		}
		time.Sleep(10 * time.Second)
		if s.Len() != 0 {
			t.Fatalf("Len at +65s = %d, want 0: reaped at the tick of +60s", s.Len())
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("RunReaper = %v, want context.Canceled", err)
		}
	})
	// An interval time.NewTicker would panic on is an error instead.
	for _, d := range []time.Duration{0, -time.Second} {
		if err := idempotency.RunReaper(t.Context(), d, nil, nil); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("RunReaper(interval %v) = %v, want an error saying it must be positive", d, err)
		}
	}
}
