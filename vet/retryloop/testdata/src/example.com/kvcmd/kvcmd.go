// Package kvcmd is a stand-in for a key-value client whose calls return a
// command value to read the answer from (c.Get(ctx, key).Result()), as
// go-redis's do.
package kvcmd

import (
	"context"
	"net"
)

// Client talks to a key-value server.
type Client struct{ conn net.Conn }

// StringCmd holds one command's answer.
type StringCmd struct {
	val string
	err error
}

// Result returns the command's answer.
func (c *StringCmd) Result() (string, error) { return c.val, c.err }

// Get asks the server for key.
func (c *Client) Get(ctx context.Context, key string) *StringCmd {
	if err := ctx.Err(); err != nil {
		return &StringCmd{err: err}
	}
	if _, err := c.conn.Write([]byte("GET " + key + "\r\n")); err != nil {
		return &StringCmd{err: err}
	}
	buf := make([]byte, 512)
	n, err := c.conn.Read(buf)
	return &StringCmd{val: string(buf[:n]), err: err}
}
