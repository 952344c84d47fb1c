package cenkaltis

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// download converts its ExponentialBackOff to the BackOff interface
// before choosing whether to cap it: made in sight either way, and never
// wrapped in WithContext, so its waits cannot hear ctx.
//
// case: flag deafwait
func download(ctx context.Context, q *queue, topic string, retries bool) error {
	exp := backoff.NewExponentialBackOff()
	exp.InitialInterval = time.Second
	b := backoff.BackOff(exp)
	if !retries {
		b = backoff.WithMaxRetries(exp, 0)
	}
	return backoff.RetryNotify(func() error { return q.subscribe(ctx, topic) }, b, nil) // want `deafwait: backoff.RetryNotify waits on a context of its own`
}

// downloadHeard converts a backoff already wrapped in WithContext.
//
// case: clean
func downloadHeard(ctx context.Context, q *queue, topic string) error {
	b := backoff.BackOff(backoff.WithContext(backoff.NewExponentialBackOff(), ctx))
	return backoff.RetryNotify(func() error { return q.subscribe(ctx, topic) }, b, nil)
}
