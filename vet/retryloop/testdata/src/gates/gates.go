// Package gates holds, written anew, loops whose attempt sits behind a
// test of the clock, followed by nothing but a wait: a node client's
// reconnect, beside a periodic flush of the same shape.
package gates

import (
	"net"
	"time"
)

type client struct {
	addr         string
	conn         net.Conn
	disconnected time.Time
	lastFlush    time.Time
	pending      [][]byte
}

// reconnect dials again once ten seconds have passed since the
// disconnect, and every ten seconds after a failed dial, for ever: the
// rounds that skip the dial try nothing, and every dial that fails goes
// round on a constant wait with nothing to end it.
//
// case: flag nojitter unbounded
func (c *client) reconnect() {
	for { // want `unbounded: retry loop has no bound`
		const delay = 10 * time.Second
		if time.Since(c.disconnected) > delay {
			conn, err := net.Dial("tcp", c.addr)
			if err == nil {
				c.conn = conn
				return
			}
		}
		time.Sleep(delay) // want `nojitter: this wait in a retry loop`
	}
}

// flushLoop writes what is pending every second, once a second has
// passed since the last flush that worked: a periodic job that goes round
// on success, and paces its failures like its successes.
//
// case: clean
func (c *client) flushLoop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if time.Since(c.lastFlush) > time.Second && c.conn != nil {
			if err := c.flush(); err == nil {
				c.lastFlush = time.Now()
			}
		}
		time.Sleep(time.Second)
	}
}

func (c *client) flush() error {
	for _, p := range c.pending {
		if _, err := c.conn.Write(p); err != nil {
			return err
		}
	}
	c.pending = nil
	return nil
}
