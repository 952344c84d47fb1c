// Package usepacer holds loops whose waits are made in another package
// (pacer) or behind a setting's default: the shapes of real clients'
// reconnect and write loops, written for these tests.
package usepacer

import (
	"context"
	"errors"
	"net"
	"time"

	"pacer"
)

var dialer net.Dialer

// case: flag nojitter
func redial(ctx context.Context, addr string) (net.Conn, error) {
	st := &pacer.Step{Cap: time.Minute}
	for {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(st.Next()): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		}
	}
}

// case: clean
func redialSpread(ctx context.Context, addr string) (net.Conn, error) {
	st := &pacer.Step{Cap: time.Minute, Spread: time.Second}
	for {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(st.Next()):
		}
	}
}

// case: flag nojitter
func redialScaled(ctx context.Context, addr string) (net.Conn, error) {
	for i := 0; ; i++ {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		t := time.NewTimer(pacer.Scaled(i, 20*time.Millisecond, 2*time.Second)) // want `nojitter`
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// case: clean
func redialFuzzed(ctx context.Context, addr string) (net.Conn, error) {
	for i := 0; ; i++ {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pacer.Fuzzed(time.Second << i)):
		}
	}
}

// throttled is the error of a refused call; RetryAfter is what the
// server asked for.
type throttled struct{ RetryAfter time.Duration }

func (t *throttled) Error() string { return "throttled" }

func open(ctx context.Context) error { _, err := dialer.DialContext(ctx, "tcp", "db:5432"); return err }

// case: flag nojitter
func reconnect(ctx context.Context) error {
	st := &pacer.Step{}
	for {
		err := open(ctx)
		if err == nil {
			return nil
		}
		wait := st.Next()
		var t *throttled
		if errors.As(err, &t) {
			wait = max(wait, t.RetryAfter) // the server's wait: the client's own is still in step
		}
		timer := time.NewTimer(wait) // want `nojitter`
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// Writer sends batches; RetryWait is its first wait after a failed write
// (80ms when left zero).
type Writer struct {
	RetryWait time.Duration
	conn      net.Conn
}

func (w *Writer) retryWait() time.Duration {
	if w.RetryWait > 0 {
		return w.RetryWait
	}
	return 80 * time.Millisecond
}

func temporary(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// case: flag nojitter
func (w *Writer) send(b []byte) error {
	var err error
	for try := 0; try < 4; try++ {
		if try > 0 {
			time.Sleep(w.retryWait() << try) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		}
		if _, err = w.conn.Write(b); err == nil {
			return nil
		}
		if !temporary(err) {
			return err
		}
	}
	return err
}
