// Package ownretry holds loops that call a helper which retries on its
// own: the helper's pace is judged in its own loop, not in its callers'.
package ownretry

import (
	"context"
	"errors"
	"net"
	"time"
)

type pool struct {
	addr         string
	conn         net.Conn
	sleepOnError time.Duration
}

// reconnect dials until it gets through, a constant pause between tries.
//
// case: flag nojitter unbounded
func (p *pool) reconnect() {
	for { // want `unbounded: retry loop has no bound`
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			time.Sleep(p.sleepOnError) // want `nojitter: this wait in a retry loop`
			continue
		}
		p.conn = c
		return
	}
}

// giveBack hands a connection back, reconnecting it first when it failed.
func (p *pool) giveBack(failed bool) {
	if failed {
		p.reconnect()
	}
}

func (p *pool) publish(msg []byte) error {
	if p.conn == nil {
		return errors.New("no connection")
	}
	_, err := p.conn.Write(msg)
	return err
}

// A failed publish goes round at once after giving the connection back:
// the reconnect's pause is the reconnect's own (reported there), and the
// publish itself has no count to end it.
//
// case: flag unbounded
func (p *pool) publishUntilSent(msg []byte) {
	for { // want `unbounded: retry loop has no bound`
		if err := p.publish(msg); err != nil {
			p.giveBack(true)
			continue
		}
		return
	}
}

// pauseOnError waits once, the constant pause a caller's loop then takes
// as its own.
func (p *pool) pauseOnError() {
	time.Sleep(p.sleepOnError)
}

// A failed publish goes round after the helper's single constant pause:
// that pause is this loop's.
//
// case: flag nojitter
func (p *pool) publishTries(msg []byte) error {
	var err error
	for range 5 {
		if err = p.publish(msg); err == nil {
			return nil
		}
		p.pauseOnError() // want `nojitter: pauseOnError in a retry loop`
	}
	return err
}

// NewPool makes a pool with its pause.
func NewPool(addr string, d time.Duration) *pool {
	return &pool{addr: addr, sleepOnError: d}
}

// A read pump that reconnects when a read fails: the reconnect's sleeps
// are its own loop's (reported there), not a deaf wait of the pump's.
//
// case: clean
func (p *pool) readPump(ctx context.Context, buf []byte) error {
	for ctx.Err() == nil {
		if p.conn == nil {
			return errors.New("no connection")
		}
		if _, err := p.conn.Read(buf); err != nil {
			p.reconnect()
		}
	}
	return ctx.Err()
}

// The same pump pausing once after a failed read: that pause is the
// pump's own, constant, and cannot hear ctx.
//
// case: flag deafwait nojitter
func (p *pool) readPumpPausing(ctx context.Context, buf []byte) error {
	for ctx.Err() == nil {
		if p.conn == nil {
			return errors.New("no connection")
		}
		if _, err := p.conn.Read(buf); err != nil {
			p.pauseOnError() // want `deafwait: pauseOnError waits with time.Sleep and cannot hear ctx` `nojitter: pauseOnError in a retry loop`
		}
	}
	return ctx.Err()
}
