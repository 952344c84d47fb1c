// Package ownctxiface holds, written anew, a client whose methods take the
// package's own context interface, which embeds context.Context.
package ownctxiface

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// Context is the client's context: the caller's, with the client's
// logger and credentials beside it.
type Context interface {
	context.Context
	Token() string
}

// Poller is a context-free poller of a status endpoint.
type Poller interface {
	Token() string
}

// A request re-sent a random time after a failed connection, the pause
// deaf to ctx, which is the caller's context under the package's own name.
//
// case: flag deafwait
func waitReady(ctx Context, hc *http.Client, url string) (*http.Response, error) {
	for attempt := 0; attempt < 10; attempt++ {
		resp, err := hc.Get(url)
		if err == nil {
			return resp, nil
		}
		time.Sleep(rand.N(2 * time.Second)) // want `deafwait: time.Sleep ignores ctx`
	}
	return nil, errors.New("not ready")
}

// The same request given an interface that has a Token but no Done:
// nothing to hear.
//
// case: clean
func waitReadyPoller(p Poller, hc *http.Client, url string) (*http.Response, error) {
	for attempt := 0; attempt < 10; attempt++ {
		resp, err := hc.Get(url + "?t=" + p.Token())
		if err == nil {
			return resp, nil
		}
		time.Sleep(rand.N(2 * time.Second))
	}
	return nil, errors.New("not ready")
}

// session is a subscription's state, with the context it runs under
// embedded.
type session struct {
	context.Context
	url string
}

// A connection retried a constant second apart while the session, whose
// embedded context is the subscription's, goes unheard.
//
// case: flag nojitter deafwait
func (s *session) connect(hc *http.Client) (*http.Response, error) {
	for attempt := 0; attempt < 10; attempt++ {
		resp, err := hc.Get(s.url)
		if err == nil {
			return resp, nil
		}
		time.Sleep(time.Second) // want `deafwait: time.Sleep ignores s` `nojitter: this wait in a retry loop`
	}
	return nil, errors.New("no connection")
}
