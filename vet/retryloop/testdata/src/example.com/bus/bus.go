// Package bus is a stand-in for a message bus's client and embeddable
// server (nats.go and nats-server): a client connects over the network,
// or in-process to a server the program runs itself.
package bus

import (
	"errors"
	"time"
)

// ErrNotReady is what a stream lookup answers before the stream exists.
var ErrNotReady = errors.New("bus: stream not ready")

// Server is an embedded server.
type Server struct{ Name string }

// ReadyForConnections reports whether the server accepts clients within d.
func (s *Server) ReadyForConnections(d time.Duration) bool { return s != nil }

// Option configures a connection.
type Option func(*Conn)

// InProcessServer connects to s without a network socket.
func InProcessServer(s *Server) Option { return func(c *Conn) { c.server = s } }

// Conn is a client connection.
type Conn struct{ server *Server }

// Connect dials url (or the in-process server an option names).
func Connect(url string, opts ...Option) (*Conn, error) {
	c := &Conn{}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Stream looks a stream up.
func (c *Conn) Stream(name string) error { return nil }

// Close closes the connection.
func (c *Conn) Close() {}

// APIError is the server's answer to a failed request: Code mirrors an
// HTTP status.
type APIError struct {
	Code        int
	Description string
}

func (e *APIError) Error() string { return e.Description }

// StreamError is an error that carries the server's APIError.
type StreamError interface {
	APIError() *APIError
	error
}

// GetFile copies an object of the store to path.
func (c *Conn) GetFile(name, path string) error { return nil }
