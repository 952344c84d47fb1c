// Package fieldctx holds, written anew, loops of long-lived values that
// keep the context ending their work in a field and listen to it
// themselves, everywhere but in their wait.
package fieldctx

import (
	"context"
	"log"
	"math/rand/v2"
	"net"
	"time"
)

type connector struct {
	ctx    context.Context
	cancel context.CancelFunc
	addr   string
	ready  chan struct{}
}

func newConnector(addr string) *connector {
	ctx, cancel := context.WithCancel(context.Background())
	return &connector{ctx: ctx, cancel: cancel, addr: addr, ready: make(chan struct{})}
}

func (c *connector) ping(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// Waits for the daemon, a random second apart; shut down, it stops
// between tries but not during one's wait.
//
// case: flag deafwait
func (c *connector) waitReady() {
	for {
		select {
		case <-c.ctx.Done():
			return
		default:
		}
		if err := c.ping(c.ctx); err == nil {
			close(c.ready)
			return
		}
		time.Sleep(rand.N(time.Second)) // want `deafwait: time.Sleep ignores c.ctx`
	}
}

// The same wait, heard.
//
// case: clean
func (c *connector) waitReadyHeard() {
	for {
		if err := c.ping(c.ctx); err == nil {
			close(c.ready)
			return
		}
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(rand.N(time.Second)):
		}
	}
}

type monitor struct {
	ctx    context.Context
	failed int
}

// Logs once a minute until stopped, asking the context between rounds and
// sleeping the minute deaf to it.
//
// case: flag deafwait
func (m *monitor) run() {
	for m.ctx.Err() == nil {
		log.Printf("%d failed in the last minute", m.failed)
		m.failed = 0
		time.Sleep(time.Minute) // want `deafwait: time.Sleep ignores m.ctx`
	}
}

// A value that keeps a context for its other methods; this one never
// reads it, and its pause is a local loop's.
//
// case: clean
func (m *monitor) drain(items chan int) {
	for len(items) > 0 {
		<-items
		time.Sleep(time.Millisecond)
	}
}
