// want package:"offline"

// Package grpccodes holds retries of a func value's gRPC call classified
// by status.Code of its error: on a success the error is nil, its code
// codes.OK, so the loop leaves.
package grpccodes

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type broker struct{ addr string }

type client struct{ brokers []broker }

func (c *client) choose() (broker, error) {
	if len(c.brokers) == 0 {
		return broker{}, errors.New("no broker")
	}
	return c.brokers[0], nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Only Unavailable goes round, after a constant 50 ms: classified,
// bounded and heard, but every client waits the same 50 ms.
//
// case: flag nojitter
func (c *client) doResilient(ctx context.Context, rpc func(broker) error) (err error) {
	for i := 0; i < 10; i++ {
		b, err := c.choose()
		if err != nil {
			return err
		}
		if err = rpc(b); status.Code(err) == codes.Unavailable {
			sleepCtx(ctx, 50*time.Millisecond) // want `nojitter: sleepCtx in a retry loop`
			continue
		}
		return err
	}
	return err
}

// The code read into a variable first, and the wait jittered: clean.
//
// case: clean
func (c *client) doResilientJittered(ctx context.Context, rpc func(broker) error, jitter func(time.Duration) time.Duration) (err error) {
	for i := 0; i < 10; i++ {
		b, err := c.choose()
		if err != nil {
			return err
		}
		err = rpc(b)
		code := status.Code(err)
		if code == codes.Unavailable {
			sleepCtx(ctx, jitter(50*time.Millisecond))
			continue
		}
		return err
	}
	return err
}

// The same test against codes.OK asks whether the call succeeded: a
// loop that goes round until it does not is a poll of an error, here
// "go round while it succeeds", and not this rule's.
//
// case: clean
func (c *client) whileHealthy(ctx context.Context, rpc func(broker) error) {
	for {
		b, err := c.choose()
		if err != nil {
			return
		}
		if err := rpc(b); status.Code(err) != codes.OK {
			return
		}
		sleepCtx(ctx, time.Second)
	}
}
