// Package mq stands in for an AMQP client: a connection over the network
// that says on a channel when it closes.
package mq

import "net"

// Error is why a connection closed.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// Conn is a connection to a broker.
type Conn struct{ c net.Conn }

// Dial connects to the broker at url.
func Dial(url string) (*Conn, error) {
	c, err := net.Dial("tcp", url)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c}, nil
}

// NotifyClose registers ch to receive the error the connection closes with.
func (c *Conn) NotifyClose(ch chan *Error) chan *Error { return ch }

// Closed is closed when the connection closes.
func (c *Conn) Closed() <-chan struct{} { return make(chan struct{}) }

// Deliveries hands back the messages the broker delivers.
func (c *Conn) Deliveries() <-chan []byte { return make(chan []byte) }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }
