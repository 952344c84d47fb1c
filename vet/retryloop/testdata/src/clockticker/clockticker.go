// Package clockticker holds, written anew, retry loops paced by a ticker:
// one made by an injected clock (a Clock interface whose Ticker gives a
// struct with a C channel, as benbjohnson/clock's does), and tickers whose
// Reset in the loop sets each later wait.
package clockticker

import (
	"context"
	"math/rand"
	"net"
	"time"
)

// Ticker is what a Clock's Ticker gives: C fires every period.
type Ticker struct {
	C      <-chan time.Time
	period time.Duration
}

// Reset changes the ticker's period.
func (t *Ticker) Reset(d time.Duration) { t.period = d }

// Stop stops the ticker.
func (t *Ticker) Stop() {}

// Clock is time, injected so that tests can move it.
type Clock interface {
	Now() time.Time
	Ticker(d time.Duration) *Ticker
}

type uploader struct {
	clock Clock
	addr  string
}

func (u *uploader) send(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// uploadOnClock retries on the injected clock's ticker, doubling its
// period with Reset after each failure: the same schedule for every
// client.
//
// case: flag nojitter
func (u *uploader) uploadOnClock(ctx context.Context) error {
	next := 200 * time.Millisecond
	t := u.clock.Ticker(next) // want `nojitter: the ticker in a retry loop`
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := u.send(ctx); err == nil {
				return nil
			}
			next = min(2*next, time.Minute)
			t.Reset(next)
		}
	}
}

// uploadJitteredClock is the same loop whose Reset draws each wait at
// random below the doubled cap.
//
// case: clean
func (u *uploader) uploadJitteredClock(ctx context.Context) error {
	next := 200 * time.Millisecond
	t := u.clock.Ticker(next)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := u.send(ctx); err == nil {
				return nil
			}
			next = min(2*next, time.Minute)
			t.Reset(time.Duration(rand.Int63n(int64(next))))
		}
	}
}

// uploadJittered retries on a time.Ticker made with a constant period
// and Reset to a random wait after each failure: the constant paces only
// the first round.
//
// case: clean
func (u *uploader) uploadJittered(ctx context.Context) error {
	next := 200 * time.Millisecond
	t := time.NewTicker(next)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := u.send(ctx); err == nil {
				return nil
			}
			next = min(2*next, time.Minute)
			t.Reset(time.Duration(rand.Int63n(int64(next))))
		}
	}
}
