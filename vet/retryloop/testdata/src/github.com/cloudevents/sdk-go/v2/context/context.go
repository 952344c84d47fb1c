// Package context is a stand-in for cloudevents/sdk-go's context package:
// retry parameters a context carries for the protocol's sends.
package context

import (
	"context"
	"time"
)

// RetryParams are a send's retries: a strategy, a period and a count.
type RetryParams struct {
	Strategy string
	Period   time.Duration
	MaxTries int
}

type retriesKey struct{}

// WithRetriesConstantBackoff waits delay between tries.
func WithRetriesConstantBackoff(ctx context.Context, delay time.Duration, maxTries int) context.Context {
	return context.WithValue(ctx, retriesKey{}, &RetryParams{"constant", delay, maxTries})
}

// WithRetriesExponentialBackoff waits period·2^tries between tries.
func WithRetriesExponentialBackoff(ctx context.Context, period time.Duration, maxTries int) context.Context {
	return context.WithValue(ctx, retriesKey{}, &RetryParams{"exponential", period, maxTries})
}
