// Package closeflag holds, written anew, a websocket client's read loop
// that reconnects after a read error and leaves when its owner sets a
// close flag.
package closeflag

import (
	"math/rand/v2"
	"net"
	"time"
)

type wsClient struct {
	url     string
	conn    net.Conn
	isClose bool
}

func (ws *wsClient) reconnect() {
	time.Sleep(2 * time.Second)
	if c, err := net.Dial("tcp", ws.url); err == nil {
		ws.conn = c
	}
}

// Reads until closed; a read error reconnects after the constant pause.
//
// case: flag nojitter
func (ws *wsClient) receive(handle func([]byte)) {
	buf := make([]byte, 4096)
	for {
		if ws.isClose {
			break
		}
		n, err := ws.conn.Read(buf)
		if err != nil {
			ws.reconnect() // want `nojitter: reconnect in a retry loop has a constant`
			continue
		}
		handle(buf[:n])
	}
}

// The same loop with no way out at all, a random pause.
//
// case: flag unbounded
func (ws *wsClient) receiveForever(handle func([]byte)) {
	buf := make([]byte, 4096)
	for { // want `unbounded: retry loop has no bound`
		n, err := ws.conn.Read(buf)
		if err != nil {
			time.Sleep(rand.N(2 * time.Second))
			if c, err := net.Dial("tcp", ws.url); err == nil {
				ws.conn = c
			}
			continue
		}
		handle(buf[:n])
	}
}
