// Package useretrywrap holds, written anew, callers of another package's
// retry wrapper: the wrapper's schedule, read by its fact, is theirs.
package useretrywrap

import (
	"net/http"

	"retrywrap"
)

// A webhook post retried through the wrapper's doubling delay.
//
// case: flag nojitter
func announce(hc *http.Client, url string) error {
	return retrywrap.Do(5, func() error { // want `nojitter: retrywrap.Do waits a constant or purely exponential schedule`
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// The same post through the jittered wrapper.
//
// case: clean
func announceJittered(hc *http.Client, url string) error {
	return retrywrap.Jittered(5, func() error {
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// Flush does not retry the function it is handed: no wrapper schedule
// falls on this caller.
//
// case: clean
func flushAll(flush func(int) error) error {
	return retrywrap.Flush(flush)
}
