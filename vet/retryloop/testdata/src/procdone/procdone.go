// Package procdone holds, written anew, a readiness wait that asks between
// tries whether the child process it waits for has exited, and the same
// wait with no such question.
package procdone

import (
	"context"
	"errors"
	"net"
	"os"
	"time"
)

// process is a child this program started and supervises.
type process interface {
	Status() error
}

type plugin struct {
	addr string
	proc process
}

func (p *plugin) ping(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", p.addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// awaitChild dials the plugin's socket until it answers, giving up when
// the plugin's process has exited: os.ErrProcessDone is what a process
// this program started reports once it is gone, so the server polled is
// that child's, on this machine.
//
// case: clean
func (p *plugin) awaitChild(ctx context.Context) error {
	for {
		err := p.ping(ctx)
		if err == nil {
			return nil
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if errors.Is(p.proc.Status(), os.ErrProcessDone) {
			return errors.New("plugin exited before it was ready")
		}
	}
}

// awaitPeer is the same wait with no process of its own to ask about: a
// peer elsewhere, dialled again after a constant pause.
//
// case: flag nojitter
func (p *plugin) awaitPeer(ctx context.Context) error {
	for {
		err := p.ping(ctx)
		if err == nil {
			return nil
		}
		t := time.NewTimer(200 * time.Millisecond) // want `nojitter: this wait in a retry loop`
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
