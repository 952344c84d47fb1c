// Package acceptretry holds, written anew, a server's listener wrapper
// that retries Accept on a temporary error with a doubling pause, as
// net/http's server does, beside a client's dial retry of the same shape.
// The first waits for this machine's file descriptors, not for a
// dependency; the second re-sends to a server every client shares.
package acceptretry

import (
	"errors"
	"net"
	"time"
)

type retryListener struct {
	net.Listener
	delay time.Duration
}

// Accept waits out a temporary accept error and tries again.
//
// case: clean
func (ln *retryListener) Accept() (net.Conn, error) { // want Accept:"remote=0 waits=true deaf=true jitter=1 durparam=0 retryafter=false bydefault=true ownretry"
	for {
		conn, err := ln.Listener.Accept()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if ln.delay == 0 {
				ln.delay = 5 * time.Millisecond
			} else {
				ln.delay = min(2*ln.delay, time.Second)
			}
			time.Sleep(ln.delay)
			continue
		}
		ln.delay = 0
		return conn, err
	}
}

type dialer struct {
	addr  string
	delay time.Duration
}

// dial is Accept's twin on the client's side.
//
// case: flag nojitter unbounded
func (d *dialer) dial() (net.Conn, error) {
	for { // want `unbounded: retry loop has no bound`
		conn, err := net.Dial("tcp", d.addr)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if d.delay == 0 {
				d.delay = 5 * time.Millisecond
			} else {
				d.delay = min(2*d.delay, time.Second)
			}
			time.Sleep(d.delay) // want `nojitter: this wait in a retry loop`
			continue
		}
		d.delay = 0
		return conn, err
	}
}
