// want package:"offline"

// Package ownpoll holds, written anew, an SDK's own poll helper (a
// constant second between asks of a predicate) and callers whose
// predicates go round on a failure, on a thing not there yet, or on a
// state not reached yet; and a helper of the same shape that jitters.
package ownpoll

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// WaitFor asks predicate every second until it answers true or an
// error, or the timeout (in seconds) passes.
func WaitFor(timeout int, predicate func() (bool, error)) error { // want WaitFor:`pollcond=2`
	start := time.Now()
	for {
		if time.Since(start) >= time.Duration(timeout)*time.Second {
			return errors.New("timeout")
		}
		time.Sleep(time.Second)
		done, err := predicate()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// WaitJittered is WaitFor with a random pause.
func WaitJittered(timeout int, predicate func() (bool, error)) error { // want WaitJittered:`jitter=2 durparam=0 retryafter=false bydefault=false$`
	start := time.Now()
	for {
		if time.Since(start) >= time.Duration(timeout)*time.Second {
			return errors.New("timeout")
		}
		time.Sleep(rand.N(2 * time.Second))
		done, err := predicate()
		if err != nil || done {
			return err
		}
	}
}

// InUseError is the API's answer while a resource is still in use.
type InUseError struct{ ID string }

func (e InUseError) Error() string { return fmt.Sprintf("%s in use", e.ID) }

// ErrNotFound is the API's answer for a resource not there.
var ErrNotFound = errors.New("not found")

type group struct{ Status string }

func deleteGroup(id string) error       { return nil }
func getGroup(id string) (group, error) { return group{}, nil }

// A group deleted again every constant second while the API says it is
// in use: every client that deleted at once asks again at once.
//
// case: flag nojitter
func deleteWithRetry(id string, timeout int) error {
	return WaitFor(timeout, func() (bool, error) { // want `nojitter: WaitFor goes round on a failure`
		err := deleteGroup(id)
		if err != nil {
			if _, ok := err.(InUseError); ok {
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
}

// The same delete on the jittered helper.
//
// case: clean
func deleteWithRetryJittered(id string, timeout int) error {
	return WaitJittered(timeout, func() (bool, error) {
		err := deleteGroup(id)
		if err != nil {
			if _, ok := err.(InUseError); ok {
				return false, nil
			}
			return false, err
		}
		return true, nil
	})
}

// A group waited for until it is gone: not found is the answer awaited.
//
// case: clean
func waitForDeletion(id string, timeout int) error {
	return WaitFor(timeout, func() (bool, error) {
		_, err := getGroup(id)
		if errors.Is(err, ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, nil
	})
}

// A group polled until it is active: a state not reached yet.
//
// case: clean
func waitForActive(id string, timeout int) error {
	return WaitFor(timeout, func() (bool, error) {
		g, err := getGroup(id)
		if err != nil {
			return false, err
		}
		return g.Status == "ACTIVE", nil
	})
}
