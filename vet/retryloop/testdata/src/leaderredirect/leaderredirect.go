// Package leaderredirect holds, written anew, a consensus commit: a peer
// first hands the operation to the leader (a helper that retries on its
// own and says whether it did), and only the leader commits, going round
// after a failed commit.
package leaderredirect

import (
	"context"
	"math/rand/v2"
	"net"
	"time"
)

type consensus struct {
	conn    net.Conn
	retries int
	delay   time.Duration
}

func newConsensus(conn net.Conn) *consensus {
	return &consensus{conn: conn, retries: 2, delay: 200 * time.Millisecond}
}

// redirect hands op to the leader when this peer is not it, trying the
// leader a few times, a random pause apart (deaf to ctx, which only the
// leader's answer carries on); it reports whether it did.
//
// case: flag deafwait
func (c *consensus) redirect(ctx context.Context, op string) (bool, error) {
	var err error
	for i := 0; i < 3; i++ {
		if _, err = c.conn.Write([]byte("leader? " + op)); err == nil {
			return true, nil
		}
		time.Sleep(rand.N(time.Second)) // want `deafwait: time.Sleep ignores ctx`
	}
	return false, err
}

// commitOp applies op to the log and returns its index.
func (c *consensus) commitOp(op string) (int, error) {
	return c.conn.Write([]byte(op))
}

// A failed commit goes round after the configured delay, 200 ms by
// default, the same on every peer, deaf to the caller's context.
//
// case: flag nojitter deafwait
func (c *consensus) commit(ctx context.Context, op string) error {
	var finalErr error
	for i := 0; i <= c.retries; i++ {
		ok, err := c.redirect(ctx, op) // want `deafwait: consensus.redirect is handed ctx but sleeps without hearing it`
		if err != nil || ok {
			return err
		}
		_, finalErr = c.commitOp(op)
		if finalErr != nil {
			goto RETRY
		}
		break
	RETRY:
		time.Sleep(c.delay) // want `deafwait: time.Sleep ignores ctx` `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
	}
	return finalErr
}

// The same commit, a random part of the delay, hearing the context (its
// redirect does not).
//
// case: flag deafwait
func (c *consensus) commitJittered(ctx context.Context, op string) error {
	var finalErr error
	for i := 0; i <= c.retries; i++ {
		ok, err := c.redirect(ctx, op) // want `deafwait: consensus.redirect is handed ctx but sleeps without hearing it`
		if err != nil || ok {
			return err
		}
		if _, finalErr = c.commitOp(op); finalErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(c.delay)):
		}
	}
	return finalErr
}
