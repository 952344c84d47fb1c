package testsvc

import (
	"context"
	"net"
	"sync"
)

// PipeListener is a net.Listener whose connections are made in memory by
// its DialContext (net.Pipe), so a real http.Server and http.Client can
// talk inside a testing/synctest bubble, where real sockets cannot. Make
// one with NewPipeListener; give DialContext to an http.Transport.
type PipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

// NewPipeListener returns an open PipeListener.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the next connection DialContext made, or net.ErrClosed
// once the listener is closed.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and DialContext; it may be called more than once.
func (l *PipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr returns a placeholder address.
func (l *PipeListener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener, whatever the address.
func (l *PipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	_ = client.Close()
	_ = server.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, net.ErrClosed
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
