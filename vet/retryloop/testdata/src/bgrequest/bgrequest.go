// Package bgrequest holds, written anew, a device client's send helper
// that retries transport errors after a fixed interval less the time the
// failed try took, handed requests its callers made with or without a
// context.
package bgrequest

import (
	"context"
	"net"
	"net/http"
	"time"
)

type client struct {
	hc       *http.Client
	interval time.Duration
	limit    time.Duration
}

func newClient() *client {
	return &client{hc: http.DefaultClient, interval: time.Second, limit: 30 * time.Second}
}

// Every caller builds its request with http.NewRequest: req.Context() is
// context.Background(), nothing to hear; the pause is the interval less
// what the try took, the same for every client.
//
// case: flag nojitter
func (c *client) send(req *http.Request) (*http.Response, error) {
	first := time.Now()
	for {
		start := time.Now()
		resp, err := c.hc.Do(req)
		if _, ok := err.(net.Error); !ok {
			return resp, err
		}
		if time.Since(first) >= c.limit {
			return resp, err
		}
		time.Sleep(c.interval - time.Since(start)) // want `nojitter: this wait in a retry loop`
	}
}

func (c *client) status() (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://device/status", nil)
	if err != nil {
		return nil, err
	}
	return c.send(req)
}

func (c *client) meters() (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://device/meters", nil)
	if err != nil {
		return nil, err
	}
	return c.send(req)
}

// The same helper, one of whose callers hands it a request made with its
// own context: the sleep does not hear it.
//
// case: flag nojitter deafwait
func (c *client) sendCtx(req *http.Request) (*http.Response, error) {
	first := time.Now()
	for {
		start := time.Now()
		resp, err := c.hc.Do(req)
		if _, ok := err.(net.Error); !ok {
			return resp, err
		}
		if time.Since(first) >= c.limit {
			return resp, err
		}
		time.Sleep(c.interval - time.Now().Sub(start)) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores req.Context\(\)`
	}
}

func (c *client) statusCtx(ctx context.Context) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://device/status", nil)
	if err != nil {
		return nil, err
	}
	return c.sendCtx(req)
}

func (c *client) metersCtx() (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://device/meters", nil)
	if err != nil {
		return nil, err
	}
	return c.sendCtx(req)
}

// An exported helper: its callers in the package build requests without a
// context, but a user may hand it one made with theirs.
//
// case: flag nojitter deafwait
func (c *client) Send(req *http.Request) (*http.Response, error) { // want Send:`remote=1 waits=true deaf=false jitter=1 durparam=0 retryafter=false bydefault=true ownretry`
	first := time.Now()
	for {
		start := time.Now()
		resp, err := c.hc.Do(req)
		if _, ok := err.(net.Error); !ok {
			return resp, err
		}
		if time.Since(first) >= c.limit {
			return resp, err
		}
		time.Sleep(c.interval - time.Since(start)) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores req.Context\(\)`
	}
}

func (c *client) version() (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://device/version", nil)
	if err != nil {
		return nil, err
	}
	return c.Send(req)
}
