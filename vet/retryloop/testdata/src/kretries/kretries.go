// want package:"offline"

// Package kretries holds, written anew, client-go retries of a conflict
// or an error on a wait.Backoff the call gives: its Jitter decides
// whether clients that conflicted together retry together.
package kretries

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// A backoff of doubling steps with no Jitter.
//
// case: flag nojitter
func update(put func() error) error {
	b := wait.Backoff{Steps: 5, Duration: 100 * time.Millisecond, Factor: 2}
	return retry.RetryOnConflict(b, put) // want `nojitter: retry.RetryOnConflict waits a constant or purely exponential schedule`
}

// client-go's own DefaultRetry: 10% jitter.
//
// case: clean
func updateDefault(put func() error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, put)
}

// A literal with a Jitter of its own.
//
// case: clean
func updateJittered(put func() error) error {
	return retry.RetryOnConflict(wait.Backoff{Steps: 5, Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.5}, put)
}

// A literal whose Jitter the function sets apart.
//
// case: clean
func updateSetApart(put func() error, jitter float64) error {
	b := wait.Backoff{Steps: 5, Duration: 100 * time.Millisecond, Factor: 2}
	b.Jitter = jitter
	return retry.RetryOnConflict(b, put)
}

var errTooMany = errors.New("too many requests")

// flushBackoff is the package's schedule for flushes: a constant second.
var flushBackoff = wait.Backoff{Steps: 10, Duration: time.Second, Factor: 1, Jitter: 0}

// OnError with a package variable's literal whose Jitter is zero.
//
// case: flag nojitter
func flush(send func() error) error {
	return retry.OnError(flushBackoff, func(err error) bool { return errors.Is(err, errTooMany) }, send) // want `nojitter: retry.OnError waits`
}

// A backoff the caller hands in.
//
// case: clean
func updateWith(b wait.Backoff, put func() error) error {
	return retry.RetryOnConflict(b, put)
}

// A backoff with no Duration: the retries follow each other at once, with
// no wait to jitter.
//
// case: clean
func updateNoWait(put func() error) error {
	return retry.RetryOnConflict(wait.Backoff{Steps: 3}, put)
}

// A backoff of one step: the work is tried once and never waited on.
//
// case: clean
func updateOnce(put func() error) error {
	b := wait.Backoff{Steps: 1, Duration: time.Second, Factor: 2}
	return retry.RetryOnConflict(b, put)
}

// Two steps of a constant wait with no Jitter: one retry, on a schedule
// every client shares.
//
// case: flag nojitter
func updateTwice(put func() error) error {
	return retry.RetryOnConflict(wait.Backoff{Steps: 2, Duration: 50 * time.Millisecond}, put) // want `nojitter: retry.RetryOnConflict waits`
}
