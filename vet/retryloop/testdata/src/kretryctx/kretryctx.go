// want package:"offline"

// Package kretryctx holds, written anew, client-go retries made while a
// context is in scope: retry.OnError and RetryOnConflict wait between
// attempts with wait.ExponentialBackoff's time.Sleep, which no context
// reaches.
package kretryctx

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

type object struct{ annotations map[string]string }

type kube interface {
	Get(ctx context.Context, name string) (*object, error)
	Update(ctx context.Context, o *object) error
}

var errGone = errors.New("gone")

// Conflicts are retried on DefaultRetry, deaf to ctx.
//
// case: flag deafwait
func annotate(ctx context.Context, k kube, name, key, val string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { // want `deafwait: retry.RetryOnConflict waits with time.Sleep between attempts \(wait.ExponentialBackoff\) and cannot hear ctx`
		o, err := k.Get(ctx, name)
		if err != nil {
			return err
		}
		o.annotations[key] = val
		return k.Update(ctx, o)
	})
}

// The same with no context in scope: nothing to hear.
//
// case: clean
func annotateNoCtx(k kube, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := k.Get(context.TODO(), name)
		if err != nil {
			return err
		}
		return k.Update(context.TODO(), o)
	})
}

// OnError with a jittered backoff of its own, the ctx a parameter.
//
// case: flag deafwait
func update(ctx context.Context, k kube, o *object) error {
	b := wait.Backoff{Duration: time.Second, Factor: 1, Jitter: 0.1, Steps: 5}
	return retry.OnError(b, func(err error) bool { return !errors.Is(err, errGone) }, func() error { // want `deafwait: retry.OnError waits with time.Sleep between attempts`
		return k.Update(ctx, o)
	})
}

// One step only: it never waits.
//
// case: clean
func updateOnce(ctx context.Context, k kube, o *object) error {
	b := wait.Backoff{Duration: time.Second, Steps: 1}
	return retry.OnError(b, func(err error) bool { return true }, func() error {
		return k.Update(ctx, o)
	})
}
