package packetservers

import (
	"bufio"
	"context"
	"errors"
	"net"
	"time"
)

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

type TCPHandler struct{ timeout time.Duration }

func (h TCPHandler) readLine(conn net.Conn, r *bufio.Reader) (string, error) {
	if err := conn.SetReadDeadline(time.Now().Add(h.timeout)); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

// A server reading a client's connection, a temporary error asked again
// on the same socket after a growing pause: nothing behind it to spread.
//
// case: clean
func (h TCPHandler) readLoop(ctx context.Context, conn net.Conn, r *bufio.Reader, lines chan<- string) error {
	for attempt := 0; ; attempt++ {
		line, err := h.readLine(conn, r)
		if err == nil {
			lines <- line
			attempt = 0
			continue
		}
		if attempt < 10 && temporary(err) {
			pause(ctx, time.Duration(attempt*attempt)*10*time.Millisecond)
			continue
		}
		return err
	}
}

type client struct{ timeout time.Duration }

func (c client) readLine(conn net.Conn, r *bufio.Reader) (string, error) {
	if err := conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

// The same read in a client that dials the server again after each
// failure: a retry of its dependency, the quadratic pause never randomised.
//
// case: flag nojitter
func (c client) readLoop(ctx context.Context, addr string, lines chan<- string) error {
	for attempt := 0; attempt < 10; attempt++ {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			var line string
			if line, err = c.readLine(conn, bufio.NewReader(conn)); err == nil {
				lines <- line
				return nil
			}
		}
		pause(ctx, time.Duration(attempt*attempt)*10*time.Millisecond) // want `nojitter: pause in a retry loop`
	}
	return errors.New("gave up")
}
