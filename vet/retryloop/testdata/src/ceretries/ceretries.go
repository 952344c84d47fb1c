// want package:"offline"

// Package ceretries holds, written anew, contexts made for cloudevents'
// retried sends: the sdk waits the period, or the period times 2^tries,
// between them, never randomised.
package ceretries

import (
	"context"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cecontext "github.com/cloudevents/sdk-go/v2/context"
)

// auditContext retries the audit event three times, 10 ms doubling.
//
// case: flag nojitter
func auditContext(ctx context.Context) context.Context {
	return cloudevents.ContextWithRetriesExponentialBackoff(context.WithoutCancel(ctx), 10*time.Millisecond, 3) // want `nojitter: cloudevents.ContextWithRetriesExponentialBackoff makes cloudevents' sends retry on a schedule with no jitter`
}

// pingContext retries through the context package's own name, a second
// apart.
//
// case: flag nojitter
func pingContext(ctx context.Context) context.Context {
	return cecontext.WithRetriesConstantBackoff(ctx, time.Second, 5) // want `nojitter: cecontext.WithRetriesConstantBackoff makes cloudevents' sends retry`
}

// onceContext asks for no retries at all: nothing to jitter.
//
// case: clean
func onceContext(ctx context.Context) context.Context {
	return cloudevents.ContextWithRetriesConstantBackoff(ctx, time.Second, 0)
}
