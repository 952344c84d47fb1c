// want package:"offline"

// Package cenkaltis holds, written anew, retries driven by
// cenkalti/backoff whose schedule the call builds where the analyzer can
// see it: a ConstantBackOff, or an ExponentialBackOff with no
// RandomizationFactor, sends every client back at the same moments.
package cenkaltis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	backoffv1 "gopkg.in/cenkalti/backoff.v1"
)

type queue struct{}

func (q *queue) publish(msg string) error                          { return nil }
func (q *queue) status(id string) (string, error)                  { return "", nil }
func (q *queue) subscribe(ctx context.Context, topic string) error { return nil }

// Every publish failure goes round on a constant second.
//
// case: flag nojitter
func publishConstant(q *queue, msg string) error {
	return backoff.Retry(func() error { return q.publish(msg) }, backoff.WithMaxRetries(backoff.NewConstantBackOff(time.Second), 5)) // want `nojitter: backoff.Retry waits a constant or purely exponential schedule`
}

// NewExponentialBackOff's default RandomizationFactor jitters it.
//
// case: clean
func publishDefault(q *queue, msg string) error {
	return backoff.Retry(func() error { return q.publish(msg) }, backoff.NewExponentialBackOff())
}

// A literal that leaves RandomizationFactor out doubles exactly; one that
// leaves MaxElapsedTime out never stops either.
//
// case: flag nojitter unbounded
func publishLiteral(q *queue, msg string) error {
	b := &backoff.ExponentialBackOff{InitialInterval: 100 * time.Millisecond}
	op := func() error {
		if err := q.publish(msg); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		return nil
	}
	return backoff.RetryNotify(op, b, nil) // want `nojitter: backoff.RetryNotify waits a constant or purely exponential schedule` `unbounded: backoff.RetryNotify retries until it succeeds`
}

// The default made, then its factor set to zero.
//
// case: flag nojitter
func publishZeroed(q *queue, msg string) error {
	b := backoff.NewExponentialBackOff()
	b.RandomizationFactor = 0
	return backoff.Retry(func() error { return q.publish(msg) }, b) // want `nojitter: backoff.Retry waits a constant or purely exponential schedule`
}

// A constant poll of a job's status: "pending", an answer, goes round
// as an error made on the spot. Polling, not a retry.
//
// case: clean
func waitDone(q *queue, id string) error {
	return backoff.Retry(func() error {
		st, err := q.status(id)
		if err != nil {
			return backoff.Permanent(err)
		}
		if st != "done" {
			return errors.New("pending")
		}
		return nil
	}, backoff.NewConstantBackOff(2*time.Second))
}

// A hand-written loop pacing its failures with a ConstantBackOff's
// NextBackOff.
//
// case: flag nojitter
func publishLoop(q *queue, msg string) error {
	b := backoff.NewConstantBackOff(500 * time.Millisecond)
	var err error
	for i := 0; i < 4; i++ {
		if err = q.publish(msg); err == nil {
			return nil
		}
		time.Sleep(b.NextBackOff()) // want `nojitter: this wait in a retry loop has a constant`
	}
	return err
}

// The same loop with the jittered default.
//
// case: clean
func publishLoopJittered(q *queue, msg string) error {
	b := backoff.NewExponentialBackOff()
	var err error
	for i := 0; i < 4; i++ {
		if err = q.publish(msg); err == nil {
			return nil
		}
		time.Sleep(b.NextBackOff())
	}
	return err
}

// A subscription retried by gopkg.in's backoff.v1: its timer hears no
// context, and a cancelled subscription fails and goes round until the
// backoff gives up.
//
// case: flag deafwait
func subscribe(ctx context.Context, q *queue, topic string) error {
	return backoffv1.RetryNotify(func() error { return q.subscribe(ctx, topic) }, backoffv1.NewExponentialBackOff(), nil) // want `deafwait: backoff.RetryNotify waits on a context of its own \(its BackOff has no WithContext\) and cannot hear ctx`
}

// The backoff wrapped in WithContext: the wait hears ctx.
//
// case: clean
func subscribeHeard(ctx context.Context, q *queue, topic string) error {
	return backoff.Retry(func() error { return q.subscribe(ctx, topic) }, backoff.WithContext(backoff.NewExponentialBackOff(), ctx))
}

// The operation makes a cancelled context permanent: the next try after
// cancellation ends it.
//
// case: clean
func subscribeStops(ctx context.Context, q *queue, topic string) error {
	return backoff.Retry(func() error {
		err := q.subscribe(ctx, topic)
		if errors.Is(err, context.Canceled) {
			return backoff.Permanent(err)
		}
		return err
	}, backoff.NewExponentialBackOff())
}
