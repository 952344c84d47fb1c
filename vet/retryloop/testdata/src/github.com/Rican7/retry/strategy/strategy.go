// Package strategy is a stub of Rican7/retry's strategies: functions of
// the attempt number that may sleep before it.
package strategy

import (
	"math/rand"
	"time"

	"github.com/Rican7/retry/backoff"
)

// Strategy is told the attempt number and says whether to go on.
type Strategy func(attempt uint) bool

// Backoff sleeps what algorithm gives for the attempt.
func Backoff(algorithm backoff.Algorithm) Strategy {
	return func(attempt uint) bool {
		if attempt > 0 {
			time.Sleep(algorithm(attempt))
		}
		return true
	}
}

// BackoffWithJitter sleeps a random part of what algorithm gives.
func BackoffWithJitter(algorithm backoff.Algorithm) Strategy {
	return func(attempt uint) bool {
		if attempt > 0 {
			time.Sleep(time.Duration(rand.Int63n(int64(algorithm(attempt)) + 1)))
		}
		return true
	}
}

// Limit stops after n attempts.
func Limit(n uint) Strategy { return func(attempt uint) bool { return attempt < n } }

// Delay sleeps once, before the first attempt.
func Delay(d time.Duration) Strategy {
	return func(attempt uint) bool {
		if attempt == 0 {
			time.Sleep(d)
		}
		return true
	}
}
