package exits

import (
	"net"
	"time"
)

// sendChunk writes a chunk to the metrics endpoint, dialling again a
// second after each failure until the worker's exit channel closes.
//
// case: flag nojitter
func sendChunk(exit chan bool, addr string, chunk []byte) {
	for {
		select {
		case <-exit:
			return
		default:
		}
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		_, err = conn.Write(chunk)
		conn.Close()
		if err == nil {
			return
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
}

// sendChunkForever has no exit channel to hear.
//
// case: flag nojitter unbounded
func sendChunkForever(addr string, chunk []byte) {
	for { // want `unbounded: retry loop has no bound`
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		_, err = conn.Write(chunk)
		conn.Close()
		if err == nil {
			return
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
}
