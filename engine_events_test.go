package recoil_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
)

// fixedSource draws frac of every range: 0 is always the least, 0.999 the
// most.
type fixedSource struct {
	frac  float64
	draws int
}

func (f *fixedSource) Int64N(n int64) int64 {
	f.draws++
	return int64(f.frac * float64(n))
}

// TestWithJitter: a call under WithJitter draws its waits from the
// context's source, not the policy's, and a call without it from the
// policy's; a nil source changes nothing.
func TestWithJitter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ctxSource  bool
		nilSource  bool
		wantPolicy int // draws from the policy's source
		wantCtx    int // draws from the context's
		wantWaited time.Duration
	}{
		{name: "policy's Rand", wantPolicy: 2, wantWaited: 300 * time.Millisecond},
		{name: "context's source", ctxSource: true, wantCtx: 2, wantWaited: 150 * time.Millisecond},
		{name: "nil source", nilSource: true, wantPolicy: 2, wantWaited: 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The policy's draws take the whole range (100 + 200 ms), the
				// context's half of it (50 + 100 ms).
				pol, own := &fixedSource{frac: 0.999999}, &fixedSource{frac: 0.5}
				p := &recoil.Policy{MaxAttempts: 3, Budget: recoil.NoBudget, Rand: pol,
					Backoff: backoff.FullJitter{Base: 100 * time.Millisecond, Max: time.Second}}
				ctx := t.Context()
				switch {
				case tc.ctxSource:
					ctx = recoil.WithJitter(ctx, own)
				case tc.nilSource:
					ctx = recoil.WithJitter(ctx, nil)
				}
				start := time.Now()
				err := recoil.Do(ctx, p, func(context.Context) error { return errors.New("down") })
				if err == nil {
					t.Fatal("Do: nil error after three failures")
				}
				if pol.draws != tc.wantPolicy || own.draws != tc.wantCtx {
					t.Errorf("draws: policy's %d, context's %d; want %d and %d", pol.draws, own.draws, tc.wantPolicy, tc.wantCtx)
				}
				if got := time.Since(start); got < tc.wantWaited-time.Millisecond || got > tc.wantWaited {
					t.Errorf("waited %v, want about %v", got, tc.wantWaited)
				}
			})
		})
	}
}

// TestOnAttemptAbandoned: an attempt the caller abandons mid-flight reaches
// OnAttempt as canceled, so an observer counting attempts counts every
// attempt sent.
func TestOnAttemptAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var events []recoil.AttemptEvent
		p := &recoil.Policy{OnAttempt: func(_ context.Context, e recoil.AttemptEvent) { events = append(events, e) }}
		ctx, cancel := context.WithCancel(t.Context())
		n := 0
		err := recoil.Do(ctx, p, func(ctx context.Context) error {
			n++
			if n == 1 {
				return errors.New("down") // a failure, retried
			}
			time.AfterFunc(10*time.Millisecond, cancel) // the caller gives up mid-attempt
			<-ctx.Done()
			return ctx.Err()
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Do: %v, want context.Canceled", err)
		}
		if len(events) != 2 {
			t.Fatalf("%d events, want 2 (the failure and the abandoned attempt): %+v", len(events), events)
		}
		e := events[1]
		if e.Attempt != 2 || e.Verdict.Class != recoil.ClassCanceled || e.Reason != recoil.ReasonCanceled || e.Retry || !errors.Is(e.Err, context.Canceled) {
			t.Errorf("abandoned attempt's event: %+v", e)
		}
	})
}
