// Package retrywrap holds, written anew, a package's own retry settings
// around avast/retry-go: its exported Do hands the caller's function to
// the library with a doubling delay and no RandomDelay.
package retrywrap

import (
	retrygo "github.com/avast/retry-go/v4"
)

// Do retries work up to attempts times, doubling the delay.
//
// case: flag nojitter
func Do(attempts uint, work func() error) error { // want Do:`libwork=2`
	return retrygo.Do(work, retrygo.Attempts(attempts), retrygo.DelayType(retrygo.BackOffDelay)) // want `nojitter: retry.Do waits`
}

// Jittered retries work on retry-go's default schedule.
//
// case: clean
func Jittered(attempts uint, work func() error) error { // want Jittered:`waits=true`
	return retrygo.Do(work, retrygo.Attempts(attempts))
}

// Flush hands a step of its own to the doubling retry, not its caller's
// function: its callers' work is not retried.
//
// case: flag nojitter
func Flush(flush func(int) error) error { // want Flush:`waits=true`
	return retrygo.Do(func() error { return flush(0) }, retrygo.DelayType(retrygo.FixedDelay)) // want `nojitter: retry.Do waits`
}
