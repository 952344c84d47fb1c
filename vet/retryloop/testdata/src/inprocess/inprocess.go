// Package inprocess holds, written anew, loops that connect to a message
// bus: to a remote one, and to the server the program embeds.
package inprocess

import (
	"time"

	"example.com/bus"
)

// connectEmbedded waits for the server it runs itself, then connects
// in-process until the stream shows up: nothing leaves the process, so
// there is no storm to spread.
//
// case: clean
func connectEmbedded(s *bus.Server) *bus.Conn {
	for !s.ReadyForConnections(time.Second) {
		continue
	}
	for {
		c, err := bus.Connect("", bus.InProcessServer(s))
		if err != nil {
			continue
		}
		if err := c.Stream("events"); err == nil {
			return c
		}
		c.Close()
		time.Sleep(time.Second)
	}
}

// connectRemote connects to the cluster's URL the same way: every node
// asks again each second, forever.
//
// case: flag nojitter unbounded
func connectRemote(url string) *bus.Conn {
	for { // want `unbounded: retry loop has no bound`
		c, err := bus.Connect(url)
		if err != nil {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		if err := c.Stream("events"); err == nil {
			return c
		}
		c.Close()
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
}
