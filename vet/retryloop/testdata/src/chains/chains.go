// want package:"offline"

// Package chains holds waits whose durations pass through a constructor's
// parameters, and a backoff's first result.
// Written for these tests.
package chains

import (
	"context"
	"math/rand/v2"
	"time"
)

// Watcher redials a server after each lost connection.
type Watcher struct {
	minWait, maxWait time.Duration
	dial             func() error
	closed           bool
}

// NewWatcher makes a Watcher that waits from min, doubling up to max.
func NewWatcher(min, max time.Duration, dial func() error) *Watcher {
	return newWatcher(min, max, dial)
}

func newWatcher(min, max time.Duration, dial func() error) *Watcher {
	return &Watcher{minWait: min, maxWait: max, dial: dial}
}

// case: flag nojitter
func (w *Watcher) redial() {
	wait := w.minWait
	for {
		if err := w.dial(); err == nil {
			return
		}
		if w.closed {
			return
		}
		time.Sleep(wait) // want `nojitter: this wait`
		wait *= 2
		if wait > w.maxWait {
			wait = w.maxWait
		}
	}
}

// Backoff gives the wait before the next retry, and whether to retry.
type Backoff struct{ step, limit time.Duration }

// Next gives the wait after n failures.
func (b *Backoff) Next(n int) (time.Duration, bool) { // want Next:`result=1 resultparams=0 resultbydefault=true gates=""`
	if n > 8 {
		return 0, false
	}
	return min(b.step*time.Duration(n), b.limit), true
}

// case: flag nojitter
func dialPaced(dial func() error) {
	b := &Backoff{step: time.Second, limit: time.Minute}
	for n := 1; ; n++ {
		if dial() == nil {
			return
		}
		d, ok := b.Next(n)
		if !ok {
			return
		}
		time.Sleep(d) // want `nojitter: this wait`
	}
}

// Retrier retries on the user's schedule, jittered only if SetSpread is
// called.
type Retrier struct {
	plan   []time.Duration
	spread float64
	rnd    *rand.Rand
}

// NewRetrier makes a Retrier that waits plan[i] before retry i.
func NewRetrier(plan []time.Duration) *Retrier {
	return &Retrier{plan: plan, rnd: rand.New(rand.NewPCG(1, 2))}
}

// SetSpread makes every wait vary by up to f of itself.
func (r *Retrier) SetSpread(f float64) { r.spread = f }

func (r *Retrier) wait(i int) time.Duration {
	i = min(i, len(r.plan)-1)
	return r.plan[i] + time.Duration((r.rnd.Float64()*2-1)*r.spread*float64(r.plan[i]))
}

// case: flag nojitter
func (r *Retrier) run(ctx context.Context, op func(context.Context) error) error {
	for i := 0; ; i++ {
		err := op(ctx)
		if err == nil || i >= len(r.plan) {
			return err
		}
		t := time.NewTimer(r.wait(i)) // want `nojitter: this wait`
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
