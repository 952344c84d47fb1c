// Package packetservers holds, written anew, a UDP server's read loop that
// pauses after a read error, beside a client loop that re-sends a query
// with the same pause.
package packetservers

import (
	"context"
	"net"
	"time"
)

// The server reads the packets that come to its own socket and pauses a
// second after a read error: no dependency to spread out for (the pause
// is deaf to ctx, which the error path only checks).
//
// case: flag deafwait
func serve(ctx context.Context, conn *net.UDPConn, handle func([]byte, *net.UDPAddr)) {
	buf := make([]byte, 64<<10)
	for {
		n, addr, err := conn.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(time.Second) // want `deafwait: time.Sleep ignores ctx`
			continue
		}
		handle(buf[:n], addr)
	}
}

// A client that sends a query to a server and re-sends it a second after
// each failed send, for ever: a retry of the server, without jitter.
//
// case: flag nojitter unbounded
func query(conn *net.UDPConn, server *net.UDPAddr, q []byte) {
	for { // want `unbounded: retry loop has no bound`
		if _, err := conn.WriteToUDP(q, server); err == nil {
			return
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
}
