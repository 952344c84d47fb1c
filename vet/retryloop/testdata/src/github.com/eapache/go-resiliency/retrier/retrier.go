// Package retrier is a stub of eapache/go-resiliency's retrier: it runs
// work again after each wait of a schedule, jittered only after SetJitter.
package retrier

import (
	"context"
	"math/rand"
	"time"
)

// Retrier runs work on a schedule.
type Retrier struct {
	backoff []time.Duration
	jitter  float64
}

// Classifier is told nothing here: every error is retried.
type Classifier interface{}

// New makes a Retrier with a schedule.
func New(backoff []time.Duration, class Classifier) *Retrier { return &Retrier{backoff: backoff} }

// ConstantBackoff is n waits of amount.
func ConstantBackoff(n int, amount time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = amount
	}
	return out
}

// SetJitter randomises each wait by up to jit of itself.
func (r *Retrier) SetJitter(jit float64) { r.jitter = jit }

// RunCtx runs work until it succeeds, the schedule ends or ctx is done.
func (r *Retrier) RunCtx(ctx context.Context, work func(ctx context.Context) error) error {
	for i := 0; ; i++ {
		err := work(ctx)
		if err == nil || i >= len(r.backoff) {
			return err
		}
		d := r.backoff[i]
		if r.jitter > 0 {
			d += time.Duration(rand.Float64() * r.jitter * float64(d))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}
