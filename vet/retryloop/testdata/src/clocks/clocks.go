// Package clocks holds, written anew, retry loops that wait through an
// injected clock (an interface with the real clock's Sleep and After, swapped
// for a fake one in tests): the wait is the real clock's.
package clocks

import (
	"context"
	"errors"
	"math/rand"
	"net"
	"time"
)

// Clock is the injected clock: the real one in production, a fake in
// tests.
type Clock interface {
	Now() time.Time
	Sleep(d time.Duration)
	After(d time.Duration) <-chan time.Time
}

type inspector struct {
	clock    Clock
	attempts int
	base     time.Duration
}

func newInspector(clock Clock) *inspector {
	return &inspector{clock: clock, attempts: 3, base: 100 * time.Millisecond}
}

// inspect asks a daemon at most attempts times, each wait twice the last
// on the clock's After, with no randomness.
//
// case: flag nojitter
func (in *inspector) inspect(ctx context.Context, addr string) (net.Conn, error) {
	backoff := in.base
	for i := 0; ; i++ {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			return conn, nil
		}
		if i == in.attempts {
			return nil, err
		}
		select {
		case <-in.clock.After(backoff): // want `nojitter: in.clock.After in a retry loop has a constant or purely exponential duration by default`
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff *= 2
	}
}

type updater struct {
	clk      Clock
	attempts int
}

func (u *updater) update(ctx context.Context) error { return errors.New("unavailable") }

// updateWithRetry waits a jittered time on the clock's Sleep before every
// try but the first, deaf to the ctx it was handed.
//
// case: flag deafwait
func (u *updater) updateWithRetry(ctx context.Context) error {
	var err error
	for i := range u.attempts {
		if i > 0 {
			u.clk.Sleep(time.Duration(rand.Int63n(int64(time.Second) << i))) // want `deafwait: u.clk.Sleep waits with time.Sleep and cannot hear ctx`
		}
		err = u.update(ctx)
		if err == nil {
			return nil
		}
	}
	return err
}

// dial waits a jittered time on the clock's After, in a select that hears
// ctx, at most five times.
//
// case: clean
func dial(ctx context.Context, clk Clock, addr string) (net.Conn, error) {
	var err error
	for i := range 5 {
		var conn net.Conn
		conn, err = net.Dial("tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-clk.After(time.Duration(rand.Int63n(int64(100*time.Millisecond) << i))):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, err
}
