// want package:"offline"

// Package notyettext holds, written anew, loops that wait for a state a
// helper reports through an error's text: the helper reads a store, finds
// the thing not there yet, and returns an error made of a constant
// message after its own read succeeded; the loop waits while the error's
// text is that message.
package notyettext

import (
	"errors"
	"fmt"
	"time"
)

const (
	msgNoAddress   = "the balancer has no address yet"
	msgUnavailable = "the address store is unavailable"
)

// Balancer is a load balancer as a store records it.
type Balancer struct{ Addresses []string }

// Store reads balancers.
type Store interface {
	Get(name string) (*Balancer, error)
}

func addresses(s Store, name string) ([]string, error) {
	b, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	if len(b.Addresses) == 0 {
		return nil, fmt.Errorf("%s", msgNoAddress)
	}
	return b.Addresses, nil
}

// publishedAddresses waits for the balancer to be given an address: the
// helper's read succeeded and the answer says "not yet", a state to wait
// for rather than a failure to retry.
//
// case: clean
func publishedAddresses(s Store, name string) ([]string, error) {
	for {
		addrs, err := addresses(s, name)
		if err != nil {
			if err.Error() == msgNoAddress {
				time.Sleep(time.Second)
				continue
			}
			return nil, err
		}
		return addrs, nil
	}
}

func addressesOrUnavailable(s Store, name string) ([]string, error) {
	b, err := s.Get(name)
	if err != nil {
		return nil, errors.New(msgUnavailable)
	}
	return b.Addresses, nil
}

// publishedAddressesRetried is its twin whose message is the read's own
// failure, made under the test of its error: every failed read is
// retried after the same second, for ever.
//
// case: flag nojitter unbounded
func publishedAddressesRetried(s Store, name string) ([]string, error) {
	for { // want `unbounded: retry loop has no bound on attempts or total time`
		addrs, err := addressesOrUnavailable(s, name)
		if err != nil {
			if err.Error() == msgUnavailable {
				time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
				continue
			}
			return nil, err
		}
		return addrs, nil
	}
}
