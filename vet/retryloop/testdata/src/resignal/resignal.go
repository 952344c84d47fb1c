// Package resignal holds, written anew, a market-data stream's reconnect
// loop driven by its own signal: a select case receives from the
// client's reconnect channel, cools down, dials, and on a failed dial
// signals itself again, so the cool-down paces a retry of the dial.
// Beside it, a jittered twin, and one whose failed dial is only logged
// (the next signal comes from elsewhere: the wait paces signals, not
// retries).
package resignal

import (
	"context"
	"log"
	"math/rand/v2"
	"net"
	"time"
)

type stream struct {
	addr       string
	reconnectC chan struct{}
	msgs       chan []byte
}

// reconnect asks the loop to dial again, unless it already will.
func (s *stream) reconnect() {
	select {
	case s.reconnectC <- struct{}{}:
	default:
	}
}

func (s *stream) dial(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// run re-dials on every signal after a constant cool-down, and signals
// itself again when the dial fails.
//
// case: flag nojitter
func (s *stream) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.reconnectC:
			select {
			case <-ctx.Done():
				return
			case <-time.After(15 * time.Second): // want `nojitter: this wait in a retry loop`
			}
			if err := s.dial(ctx); err != nil {
				log.Print(err)
				s.reconnect()
			}
		case m := <-s.msgs:
			log.Print(len(m))
		}
	}
}

// runSpread is run with a cool-down drawn at random.
//
// case: clean
func (s *stream) runSpread(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.reconnectC:
			select {
			case <-ctx.Done():
				return
			case <-time.After(rand.N(15 * time.Second)):
			}
			if err := s.dial(ctx); err != nil {
				log.Print(err)
				s.reconnect()
			}
		case m := <-s.msgs:
			log.Print(len(m))
		}
	}
}

// runOnce dials on every signal after the cool-down and only logs a
// failed dial: nothing here sends the signal again.
//
// case: clean
func (s *stream) runOnce(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.reconnectC:
			select {
			case <-ctx.Done():
				return
			case <-time.After(15 * time.Second):
			}
			if err := s.dial(ctx); err != nil {
				log.Print(err)
			}
		case m := <-s.msgs:
			log.Print(len(m))
		}
	}
}
