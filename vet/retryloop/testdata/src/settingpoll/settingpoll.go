// Package settingpoll holds, written anew, waits for a state whose
// interval grows on every round and is overridden by a setting: the
// override is taken whatever the round's answer, so it resets nothing.
package settingpoll

import (
	"net"
	"time"
)

// Conf is the caller's settings.
type Conf struct {
	Refresh      func() (string, error)
	Target       string
	PollInterval time.Duration
}

// A poll of the state, its interval doubling from 100 ms unless the
// caller set one: paced alike whatever the answer.
//
// case: clean
func (conf *Conf) wait(stop <-chan struct{}) (string, error) {
	var wait time.Duration
	for {
		select {
		case <-stop:
			return "", nil
		case <-time.After(wait):
			if wait == 0 {
				wait = 100 * time.Millisecond
			}
		}
		state, err := conf.Refresh()
		if err != nil {
			return "", err
		}
		if state == conf.Target {
			return state, nil
		}
		wait *= 2
		if conf.PollInterval > 0 {
			wait = conf.PollInterval
		} else if wait > 10*time.Second {
			wait = 10 * time.Second
		}
	}
}

// Its twin redials: the wait doubles on each failed dial and starts again
// from 100 ms once a connection came back and ended.
//
// case: flag nojitter
func redial(addr string, stop <-chan struct{}) {
	wait := 100 * time.Millisecond
	for {
		select {
		case <-stop:
			return
		case <-time.After(wait): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			wait *= 2
			continue
		}
		if ok := serve(conn); ok {
			wait = 100 * time.Millisecond
		}
	}
}

func serve(conn net.Conn) bool { return conn.Close() == nil }
