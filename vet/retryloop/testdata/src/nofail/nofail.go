// Package nofail holds, written anew, subscription loops that would retry
// making a listener: once where making it never fails (the retry path is
// dead), once where it dials and can.
package nofail

import (
	"errors"
	"log"
	"net"
	"time"
)

// listener relays a registry's events.
type listener struct {
	events chan string
	conn   net.Conn
}

// newListener only builds a listener in memory: its error is always nil.
func newListener(size int) (*listener, error) {
	if size <= 0 {
		return &listener{events: make(chan string)}, nil
	}
	return &listener{events: make(chan string, size)}, nil
}

// dialListener dials the registry: it fails when the registry is down.
func dialListener(addr string) (*listener, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &listener{events: make(chan string, 8), conn: conn}, nil
}

// next returns the next event, or an error once the listener is closed.
func (l *listener) next() (string, error) {
	e, ok := <-l.events
	if !ok {
		return "", errors.New("listener closed")
	}
	return e, nil
}

// subscribe would wait 3 s and try again if newListener failed, but it
// never does; the events are relayed until the listener closes.
//
// case: clean
func subscribe(notify func(string)) error {
	for {
		l, err := newListener(32)
		if err != nil {
			log.Printf("listener: %v", err)
			<-time.After(3 * time.Second)
			continue
		}
		for {
			e, err := l.next()
			if err != nil {
				return err
			}
			notify(e)
		}
	}
}

// subscribeRemote dials the registry again 3 s after each of up to five
// failed dials, the same pause each time.
//
// case: flag nojitter
func subscribeRemote(addr string, notify func(string)) error {
	for try := 0; ; try++ {
		l, err := dialListener(addr)
		if err != nil {
			if try == 4 {
				return err
			}
			log.Printf("listener: %v", err)
			<-time.After(3 * time.Second) // want `nojitter`
			continue
		}
		for {
			e, err := l.next()
			if err != nil {
				return err
			}
			notify(e)
		}
	}
}
