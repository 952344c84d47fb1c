// want package:"offline"

// Package copyopts holds a client whose retry settings are copied from the
// user's options over the package's defaults. Written for these tests.
package copyopts

import (
	"context"
	"errors"
	"time"
)

const defaultBase = time.Second

type retrySettings struct {
	base  time.Duration
	fixed time.Duration
	limit time.Duration
	tries int
}

// Options are what the user may set; zero keeps the default.
type Options struct {
	settings retrySettings
}

// Client calls a remote store.
type Client struct {
	rs   *retrySettings
	call func(context.Context) error
}

// NewClient makes a client with o's settings over the defaults.
func NewClient(o Options, call func(context.Context) error) *Client {
	c := &Client{call: call}
	c.rs = &retrySettings{base: defaultBase, limit: time.Minute, tries: 4}
	if o.settings.base != 0 {
		c.rs.base = o.settings.base
	}
	if o.settings.fixed != 0 {
		c.rs.fixed = o.settings.fixed
	}
	if o.settings.limit != 0 {
		c.rs.limit = o.settings.limit
	}
	return c
}

func (c *Client) delay(n int) time.Duration {
	if c.rs.fixed != 0 {
		return c.rs.fixed
	}
	return min(c.rs.base<<n, c.rs.limit)
}

var errBusy = errors.New("busy")

// case: flag nojitter
func (c *Client) put(ctx context.Context) error {
	var err error
	for n := 0; n < c.rs.tries; n++ {
		if err = c.call(ctx); err == nil || !errors.Is(err, errBusy) {
			return err
		}
		t := time.NewTimer(c.delay(n)) // want `nojitter: this wait`
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return err
}
