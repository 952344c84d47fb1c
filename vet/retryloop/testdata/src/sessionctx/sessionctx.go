// Package sessionctx holds, written anew, a broker consumer whose connect
// keeps the new connection's context in a field, cancelled when the
// connection closes, and whose reconnect loop blocks on that context each
// round: a failed connect leaves the old, done context in place, so the
// round's pause is the only pace of the retries.
package sessionctx

import (
	"context"
	"log"
	"net"
	"time"
)

type consumer struct {
	addr     string
	shutdown context.Context
	currCtx  context.Context
	readyCtx context.Context
}

// connect dials the broker and keeps a context that ends with the
// connection.
func (c *consumer) connect() error {
	conn, err := net.Dial("tcp", c.addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		buf := make([]byte, 1)
		conn.Read(buf)
	}()
	c.currCtx = ctx
	return nil
}

// refresh asks the broker for its settings once.
func (c *consumer) refresh() error {
	conn, err := net.Dial("tcp", c.addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// Each round waits a constant five seconds, blocks until the current
// connection ends, and connects again.
//
// case: flag nojitter deafwait
func (c *consumer) reconnectLoop() {
	for {
		<-time.After(5 * time.Second) // want `nojitter: this wait in a retry loop` `deafwait: a bare receive from time.After ignores c.currCtx`
		<-c.currCtx.Done()
		if c.shutdown.Err() != nil {
			return
		}
		if err := c.connect(); err != nil {
			log.Printf("reconnect: %v", err)
		}
	}
}

// A poll paced by five seconds that waits for a readiness context the
// refresh never sets: every round asks again, a failure like an answer.
//
// case: clean
func (c *consumer) pollLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
		<-c.readyCtx.Done()
		if err := c.refresh(); err != nil {
			log.Printf("refresh: %v", err)
		}
	}
}
