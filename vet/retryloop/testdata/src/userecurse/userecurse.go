// Package userecurse retries by recursion and by loop, waiting what
// another package's configuration holds.
package userecurse

import (
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"retrycfg"
)

type client struct {
	cfg *retrycfg.Config
	hc  *http.Client
}

func (c *client) send(url string) (*http.Response, error) {
	wait := *c.cfg.RetryDelay
	return c.try(*c.cfg.MaxRetries, wait, url)
}

// A retry by recursion on network errors, handing the configured delay
// down: one value for every retry of every client.
//
// case: flag nojitter
func (c *client) try(retries int, wait time.Duration, url string) (*http.Response, error) {
	resp, err := c.hc.Get(url)
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		if retries--; retries >= 0 {
			time.Sleep(wait) // want `nojitter: this wait in a retry loop`
			return c.try(retries, wait, url)
		}
	}
	return resp, err
}

func (c *client) sendJittered(url string) (*http.Response, error) {
	return c.tryJittered(*c.cfg.MaxRetries, *c.cfg.RetryDelay, url)
}

// The same, each wait drawn at random below the delay.
//
// case: clean
func (c *client) tryJittered(retries int, wait time.Duration, url string) (*http.Response, error) {
	resp, err := c.hc.Get(url)
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		if retries--; retries >= 0 {
			time.Sleep(rand.N(wait))
			return c.tryJittered(retries, wait, url)
		}
	}
	return resp, err
}

type poller struct {
	opts  retrycfg.Options
	state retrycfg.State
	url   string
}

// A loop waiting another package's configured backoff: the user's one
// value.
//
// case: flag nojitter
func (p *poller) fetch() (*http.Response, error) {
	for i := 0; i < 5; i++ {
		resp, err := http.Get(p.url)
		if err == nil {
			return resp, nil
		}
		time.Sleep(p.opts.Backoff) // want `nojitter: this wait in a retry loop`
	}
	return nil, errors.New("gave up")
}

// A loop waiting what another package's state holds: out of sight.
//
// case: clean
func (p *poller) fetchByState() (*http.Response, error) {
	for i := 0; i < 5; i++ {
		resp, err := http.Get(p.url)
		if err == nil {
			return resp, nil
		}
		time.Sleep(p.state.Next)
	}
	return nil, errors.New("gave up")
}
