// Package stopbounds holds, written anew, restart and reconnect loops
// whose bound is their owner's stopping: a shutdown channel of any element
// type, or a call that returns nil once the caller's context is done.
package stopbounds

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"time"
)

// gateway keeps a connection to a chat service.
type gateway struct {
	addr     string
	conn     net.Conn
	Shutdown chan interface{}
	events   chan interface{}
}

func (g *gateway) connect() error {
	c, err := net.Dial("tcp", g.addr)
	if err != nil {
		return err
	}
	g.conn = c
	return nil
}

// The reconnect loop ends when the owner's Shutdown channel is closed
// (its element type is interface{}, its name says what it is for).
//
// case: clean
func (g *gateway) reconnect() {
	for {
		if err := g.connect(); err == nil {
			return
		}
		select {
		case <-time.After(rand.N(3 * time.Second)):
		case <-g.Shutdown:
			return
		}
	}
}

// The same loop hearing only its event channel: nothing ends it but a
// connection.
//
// case: flag unbounded
func (g *gateway) reconnectHandling() {
	for { // want `unbounded: retry loop has no bound`
		if err := g.connect(); err == nil {
			return
		}
		select {
		case <-time.After(rand.N(3 * time.Second)):
		case ev := <-g.events:
			_ = ev
		}
	}
}

// manager restarts its watch when it fails.
type manager struct {
	errs chan error
}

// watch returns nil once ctx is done, and an error a source reports.
func (m *manager) watch(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-m.errs:
			if err != nil {
				return err
			}
		}
	}
}

// watchErr returns ctx's error once it is done.
func (m *manager) watchErr(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-m.errs:
			if err != nil {
				return err
			}
		}
	}
}

// The manager restarts its watch after a failure; the watch returns nil
// when ctx ends, which leaves the loop. (The pause is deaf to ctx.)
//
// case: flag deafwait
func (m *manager) run(ctx context.Context) {
	for {
		err := m.watch(ctx)
		if err == nil {
			return
		}
		time.Sleep(rand.N(10 * time.Second)) // want `deafwait: time.Sleep ignores ctx`
	}
}

// The same restart around a watch that returns ctx.Err() when ctx ends:
// the loop restarts it forever once cancelled.
//
// case: flag deafwait unbounded
func (m *manager) runErr(ctx context.Context) error {
	for { // want `unbounded: retry loop has no bound`
		err := m.watchErr(ctx)
		if err == nil {
			return nil
		}
		if errors.Is(err, errFatal) {
			return err
		}
		time.Sleep(rand.N(10 * time.Second)) // want `deafwait: time.Sleep ignores ctx`
	}
}

var errFatal = errors.New("fatal")
