// Package chainedcmd holds, written anew, retries of a key-value read
// whose error comes from a command value's accessor chained to the call
// (c.Get(ctx, key).Result()): the call is handed a context, but the error
// is the read's, not the context's.
package chainedcmd

import (
	"context"
	"math/rand/v2"
	"time"

	"example.com/kvcmd"
)

// upstreamToken reads a token a sidecar writes, trying again after the
// same fixed pause with a sleep its caller's ctx cannot cut short.
//
// case: flag nojitter deafwait
func upstreamToken(ctx context.Context, c *kvcmd.Client, key string, tries int) (string, error) {
	var tok string
	var err error
	for range tries {
		tok, err = c.Get(ctx, key).Result()
		if err == nil {
			break
		}
		time.Sleep(3 * time.Second) // want `deafwait: time.Sleep ignores ctx` `nojitter: this wait in a retry loop`
	}
	return tok, err
}

// upstreamTokenJittered is its twin with a jittered wait that hears ctx.
//
// case: clean
func upstreamTokenJittered(ctx context.Context, c *kvcmd.Client, key string, tries int) (string, error) {
	var tok string
	var err error
	for range tries {
		tok, err = c.Get(ctx, key).Result()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(rand.N(3 * time.Second)):
		}
	}
	return tok, err
}
