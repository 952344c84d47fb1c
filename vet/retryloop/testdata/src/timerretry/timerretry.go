// Package timerretry holds, written anew, connections that redial through
// a timer: on a failed dial a helper arms time.AfterFunc with a function
// that dials again, a retry by recursion whose wait is the timer's.
package timerretry

import (
	"math/rand"
	"net"
	"time"
)

type conn struct {
	addr      string
	c         net.Conn
	interval  time.Duration
	reconnect bool
}

func newConn(addr string) *conn {
	return &conn{addr: addr, interval: 5 * time.Second}
}

// connect dials and, on failure, has scheduleRedial call it again after
// the same five seconds, forever: reconnect is never cleared.
//
// case: flag nojitter unbounded
func (k *conn) connect() error {
	c, err := net.Dial("tcp", k.addr)
	if err != nil {
		k.reconnect = true
		k.scheduleRedial() // want `nojitter: scheduleRedial in a retry loop` `unbounded: retry by recursion has no bound`
		return err
	}
	k.c = c
	return nil
}

func (k *conn) scheduleRedial() {
	if !k.reconnect {
		return
	}
	time.AfterFunc(k.interval, func() { k.redial() })
}

func (k *conn) redial() error { return k.connect() }

type session struct {
	addr    string
	c       net.Conn
	base    time.Duration
	running bool
}

// open dials and, on failure, has retryLater call it again after a
// random share of the base wait, until close clears running.
//
// case: clean
func (s *session) open() error {
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		s.retryLater()
		return err
	}
	s.c = c
	return nil
}

func (s *session) retryLater() {
	if !s.running {
		return
	}
	time.AfterFunc(time.Duration(rand.Int63n(int64(s.base))), func() { s.open() })
}

func (s *session) close() { s.running = false }

type link struct {
	addr    string
	c       net.Conn
	stopped bool
}

// dial redials through a timer armed in place, after a constant second,
// until stop sets stopped.
//
// case: flag nojitter
func (l *link) dial() error {
	c, err := net.Dial("tcp", l.addr)
	if err != nil {
		if !l.stopped {
			time.AfterFunc(time.Second, func() { l.dial() }) // want `nojitter: time.AfterFunc in a retry loop`
		}
		return err
	}
	l.c = c
	return nil
}

func (l *link) stop() { l.stopped = true }
