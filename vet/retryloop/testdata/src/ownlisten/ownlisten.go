// Package ownlisten holds, written anew, functions that bind a port of
// their own before a loop: a readiness poll of that port, and a member
// that serves on its port and then registers with a peer elsewhere.
package ownlisten

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"time"
)

type member struct {
	addr string // where this member serves
	peer string // the coordinator it joins
	hc   *http.Client
}

// join serves on the member's port, then asks the coordinator to take it
// in, every two seconds until it can be reached: the coordinator is
// another host, and a fleet restarted together asks in step for ever.
//
// case: flag nojitter unbounded
func (m *member) join() error {
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return err
	}
	go http.Serve(ln, nil)
	body := strings.NewReader(m.addr)
	for { // want `unbounded: retry loop has no bound`
		resp, err := m.hc.Post(m.peer+"/members", "text/plain", body)
		if err == nil {
			return resp.Body.Close()
		}
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop`
	}
}

// ready is join's twin that waits for the member's own port to answer:
// a readiness poll of the server the function just started.
//
// case: clean
func (m *member) ready() error {
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return err
	}
	go http.Serve(ln, nil)
	url := "http://" + ln.Addr().String() + "/health"
	for {
		resp, err := m.hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		time.Sleep(2 * time.Second)
	}
}

// dialBack is ready's twin that dials the address it bound, by name.
//
// case: clean
func (m *member) dialBack() error {
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	for i := 0; ; i++ {
		conn, err := net.Dial("tcp", m.addr)
		if err == nil {
			return conn.Close()
		}
		if i == 100 {
			return errors.New("own port never answered")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
