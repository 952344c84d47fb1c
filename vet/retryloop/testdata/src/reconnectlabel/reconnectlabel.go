// Package reconnectlabel holds, written anew, a session initiator's
// connection loop: a failed dial jumps ahead to the wait before the next
// one, and a session that ran waits there too once its worker says the
// connection closed; the wait is a setting parsed from the user's text.
package reconnectlabel

import (
	"errors"
	"math/rand/v2"
	"net"
	"time"
)

type settings map[string]string

var errBadSetting = errors.New("bad setting")

// duration parses the named setting.
func (s settings) duration(key string) (time.Duration, error) {
	if v, err := time.ParseDuration(s[key]); err == nil {
		return v, nil
	}
	return 0, errBadSetting
}

type initiator struct {
	stop     chan struct{}
	interval time.Duration
}

func newInitiator(s settings) (*initiator, error) {
	in := &initiator{stop: make(chan struct{}), interval: 30 * time.Second}
	if _, ok := s["reconnect"]; ok {
		d, err := s.duration("reconnect")
		if err != nil {
			return nil, err
		}
		in.interval = d
	}
	return in, nil
}

// wait waits d, or until the initiator stops.
func (in *initiator) wait(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-in.stop:
		return false
	}
}

// The interval, 30 s unless the user's text says otherwise, after a
// failed dial and after a session that ended alike.
//
// case: flag nojitter
func (in *initiator) run(addr string, serve func(net.Conn)) {
	for {
		var disconnected chan struct{}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			goto reconnect
		}
		disconnected = make(chan struct{})
		go func() {
			serve(conn)
			conn.Close()
			close(disconnected)
		}()
		select {
		case <-disconnected:
		case <-in.stop:
			return
		}
	reconnect:
		if !in.wait(in.interval) { // want `nojitter: wait in a retry loop has a constant or purely exponential duration by default`
			return
		}
	}
}

// The same loop, a constant five seconds.
//
// case: flag nojitter
func (in *initiator) runFixed(addr string, serve func(net.Conn)) {
	for {
		var disconnected chan struct{}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			goto reconnect
		}
		disconnected = make(chan struct{})
		go func() {
			serve(conn)
			close(disconnected)
		}()
		select {
		case <-disconnected:
		case <-in.stop:
			return
		}
	reconnect:
		if !in.wait(5 * time.Second) { // want `nojitter: wait in a retry loop has a constant or purely exponential duration`
			return
		}
	}
}

// The same loop, a random part of the interval.
//
// case: clean
func (in *initiator) runJittered(addr string, serve func(net.Conn)) {
	for {
		var disconnected chan struct{}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			goto reconnect
		}
		disconnected = make(chan struct{})
		go func() {
			serve(conn)
			close(disconnected)
		}()
		select {
		case <-disconnected:
		case <-in.stop:
			return
		}
	reconnect:
		if !in.wait(rand.N(in.interval)) {
			return
		}
	}
}
