// Package jskv stands in for a message bus's key-value store: every call
// is a request over the bus's connection, re-published by the client
// itself a random moment later when no server answers.
package jskv

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"time"
)

// ErrTimeout is returned when no server answered in time.
var ErrTimeout = errors.New("jskv: timeout")

// Conn is a connection to the bus.
type Conn struct{ c net.Conn }

// Bucket is one key-value bucket on the bus.
type Bucket struct {
	conn *Conn
	name string
}

// request sends msg and reads the answer, sending it again up to twice,
// after a random pause, when no server answers.
func (c *Conn) request(ctx context.Context, msg []byte) ([]byte, error) {
	var err error
	for i := 0; i < 3; i++ {
		if _, err = c.c.Write(msg); err == nil {
			buf := make([]byte, 512)
			n, rerr := c.c.Read(buf)
			if rerr == nil {
				return buf[:n], nil
			}
			err = rerr
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(250 * time.Millisecond)):
		}
	}
	return nil, ErrTimeout
}

// Bucket opens (creating it if need be) the named bucket.
func (c *Conn) Bucket(ctx context.Context, name string) (*Bucket, error) {
	if _, err := c.request(ctx, []byte("bucket "+name)); err != nil {
		return nil, err
	}
	return &Bucket{conn: c, name: name}, nil
}

// Create sets key to value unless the key exists.
func (b *Bucket) Create(ctx context.Context, key, value string) error {
	_, err := b.conn.request(ctx, []byte("create "+b.name+" "+key+" "+value))
	return err
}

// Get returns the value of key.
func (b *Bucket) Get(ctx context.Context, key string) (string, error) {
	v, err := b.conn.request(ctx, []byte("get "+b.name+" "+key))
	return string(v), err
}
