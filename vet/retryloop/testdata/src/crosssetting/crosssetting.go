// Package crosssetting holds, written anew, an SDK's transport whose
// retry delay is a field of an option declared in another package, where
// a builder sets its default: two seconds, the same for every client.
package crosssetting

import (
	"errors"
	"net"
	"net/http"
	"time"

	"example.com/kopts"
)

type transport struct {
	hc  *http.Client
	opt *kopts.TransportOption
}

func temporary(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// do retries a timed-out request after the option's RetryDelay, deaf to
// the request's context.
//
// case: flag nojitter deafwait
func (t *transport) do(req *http.Request) (*http.Response, error) {
	var err error
	for attempt := 0; attempt <= t.opt.MaxRetries; attempt++ {
		var resp *http.Response
		if resp, err = t.hc.Do(req); err == nil {
			return resp, nil
		}
		if !temporary(err) {
			return nil, err
		}
		time.Sleep(t.opt.RetryDelay) // want `deafwait: time.Sleep ignores req.Context\(\)` `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
	}
	return nil, err
}

// doSpread is do waiting the option's Spread, drawn at random where its
// default is set: still deaf to the request's context.
//
// case: flag deafwait
func (t *transport) doSpread(req *http.Request) (*http.Response, error) {
	var err error
	for attempt := 0; attempt <= t.opt.MaxRetries; attempt++ {
		var resp *http.Response
		if resp, err = t.hc.Do(req); err == nil {
			return resp, nil
		}
		if !temporary(err) {
			return nil, err
		}
		time.Sleep(t.opt.Spread) // want `deafwait: time.Sleep ignores req.Context\(\)`
	}
	return nil, err
}
