// Package retry is a stub of Rican7/retry: Retry runs action until it
// succeeds or a strategy says stop; the strategies sleep.
package retry

import "github.com/Rican7/retry/strategy"

// Action is one attempt.
type Action func(attempt uint) error

// Retry runs action while it fails and every strategy says go on.
func Retry(action Action, strategies ...strategy.Strategy) error {
	var err error
	for attempt := uint(0); ; attempt++ {
		for _, s := range strategies {
			if !s(attempt) {
				return err
			}
		}
		if err = action(attempt); err == nil {
			return nil
		}
	}
}
