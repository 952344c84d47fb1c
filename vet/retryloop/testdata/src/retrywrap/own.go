// want package:"offline"

package retrywrap

import (
	"math/rand"
	"time"
)

// Retryable marks an error worth another attempt.
type Retryable string

func (r Retryable) Error() string { return string(r) }

// Times retries action up to times times, sleeping delay between attempts
// when its error is Retryable: a hand-written helper whose callers' work
// goes round on a constant wait.
//
// case: flag nojitter
func Times(times int, delay time.Duration, action func() (any, error)) (any, error) { // want Times:`libwork=3`
	var last error
	for i := 0; i < times; i++ {
		item, err := action()
		if err != nil {
			if r, ok := err.(Retryable); ok {
				last = r
				time.Sleep(delay) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration whatever its caller passes`
				continue
			}
			return nil, err
		}
		return item, nil
	}
	return nil, last
}

// Spread retries action with a full-jitter wait: its callers' rounds are
// spread.
//
// case: clean
func Spread(times int, base time.Duration, action func() error) error { // want Spread:`waits=true`
	var err error
	for i := 0; i < times; i++ {
		if err = action(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(rand.Int63n(int64(base) << i)))
	}
	return err
}

// Until polls cond every interval until it reports done: a "not yet" is a
// success, and an error ends the poll. Its callers' conditions are not
// retried.
//
// case: clean
func Until(interval time.Duration, cond func() (bool, error)) error { // want Until:`waits=true`
	for {
		done, err := cond()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		time.Sleep(interval)
	}
}
