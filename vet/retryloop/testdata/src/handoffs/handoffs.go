// Package handoffs holds, written anew, callers that hand a retry helper
// the sleep it waits with.
package handoffs

import (
	"context"
	"math/rand/v2"
	"net"
	"time"
)

type sleeper interface{ Sleep(time.Duration) }

type sleeperFunc func(time.Duration)

func (f sleeperFunc) Sleep(d time.Duration) { f(d) }

// retry runs do up to attempts times, sleeping a jittered, growing time
// with s between them.
//
// case: clean
func retry(s sleeper, attempts int, base time.Duration, do func() error) (err error) {
	for i := range attempts {
		if i > 0 {
			s.Sleep(base<<i + time.Duration(rand.Int64N(int64(time.Second))))
		}
		if err = do(); err == nil {
			return nil
		}
	}
	return err
}

// The dial hears ctx, but the sleep between its tries is time.Sleep.
//
// case: flag deafwait
func dialCtx(ctx context.Context, addr string) (net.Conn, error) {
	var conn net.Conn
	err := retry(sleeperFunc(time.Sleep), 3, time.Second, func() (err error) { // want `deafwait: time.Sleep handed to retry cannot hear ctx`
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return conn, err
}

// No context to hear: the same sleep is all there is.
//
// case: clean
func dial(addr string) (net.Conn, error) {
	var conn net.Conn
	err := retry(sleeperFunc(time.Sleep), 3, time.Second, func() (err error) {
		conn, err = net.Dial("tcp", addr)
		return err
	})
	return conn, err
}

// The sleep handed on selects on ctx.
//
// case: clean
func dialHeard(ctx context.Context, addr string) (net.Conn, error) {
	pause := sleeperFunc(func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	})
	var conn net.Conn
	err := retry(pause, 3, time.Second, func() (err error) {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return conn, err
}
