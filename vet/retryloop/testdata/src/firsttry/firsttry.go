// Package firsttry holds, written anew, reconnect loops that make their
// first try before the loop (err := c.connect(ctx); for err != nil { … })
// and hand it the caller's context: the first try is the attempt, not a
// policy deciding out of sight whether the loop goes on.
package firsttry

import (
	"context"
	"net"
	"time"
)

// Client holds a connection to a webhook relay.
type Client struct {
	addr string
	conn net.Conn
	done chan struct{}
}

// connect dials the relay.
func (c *Client) connect(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	c.conn = conn
	return nil
}

// Stop asks the client to stop.
func (c *Client) Stop() { close(c.done) }

// run dials until it connects; when ctx is done it asks the client to
// stop and dials again, at once and forever, since a cancelled dial
// fails at once too.
//
// case: flag unbounded nojitter
func (c *Client) run(ctx context.Context) {
	err := c.connect(ctx)
	for err != nil { // want `unbounded: retry loop has no bound`
		select {
		case <-ctx.Done():
			c.Stop()
		case <-time.After(10 * time.Second): // want `nojitter: this wait in a retry loop`
		}
		err = c.connect(ctx)
	}
}

// runUntilDone is run with a way out when ctx is done.
//
// case: flag nojitter
func (c *Client) runUntilDone(ctx context.Context) error {
	err := c.connect(ctx)
	for err != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second): // want `nojitter: this wait in a retry loop`
		}
		err = c.connect(ctx)
	}
	return nil
}
