// Package backoff is a stub of Rican7/retry's backoff algorithms.
package backoff

import "time"

// Algorithm is the wait before an attempt.
type Algorithm func(attempt uint) time.Duration

// Linear grows by factor each attempt.
func Linear(factor time.Duration) Algorithm {
	return func(attempt uint) time.Duration { return factor * time.Duration(attempt) }
}
