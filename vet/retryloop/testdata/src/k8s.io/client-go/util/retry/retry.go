// Package retry is a stub of client-go's util/retry: OnError retries fn
// while retriable says so, on the Backoff's schedule.
package retry

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultRetry is for conflicts: 5 steps of 10ms, 10% jitter.
var DefaultRetry = wait.Backoff{Steps: 5, Duration: 10 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// DefaultBackoff is for other errors: 4 steps from 10ms, x5, 10% jitter.
var DefaultBackoff = wait.Backoff{Steps: 4, Duration: 10 * time.Millisecond, Factor: 5.0, Jitter: 0.1}

// OnError retries fn while retriable accepts its error.
func OnError(backoff wait.Backoff, retriable func(error) bool, fn func() error) error {
	var last error
	err := wait.ExponentialBackoff(backoff, func() (bool, error) {
		last = fn()
		switch {
		case last == nil:
			return true, nil
		case retriable(last):
			return false, nil
		}
		return false, last
	})
	if err != nil {
		return last
	}
	return nil
}

// IsConflict stands for apierrors.IsConflict.
func IsConflict(err error) bool { return err != nil && err.Error() == "conflict" }

// RetryOnConflict retries fn on conflicts.
func RetryOnConflict(backoff wait.Backoff, fn func() error) error {
	return OnError(backoff, IsConflict, fn)
}
