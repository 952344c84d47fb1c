// Package ctxlike holds, written anew, loops whose context is an
// application's own type: a struct that keeps a context.Context in a
// field and forwards Done and Err to it, and another that embeds it.
// The retries dial a daemon on this machine's unix socket, or a peer.
package ctxlike

import (
	"context"
	"errors"
	"net"
	"time"
)

// KCtx keeps the process's context and forwards to it.
type KCtx struct {
	Context context.Context
	Cancel  context.CancelFunc
}

// Done is the kept context's.
func (k *KCtx) Done() <-chan struct{} { return k.Context.Done() }

// Err is the kept context's.
func (k *KCtx) Err() error { return k.Context.Err() }

// App is the application's context: settings beside the kept one.
type App struct {
	*KCtx
	Name string
}

var errNoDaemon = errors.New("no daemon")

// The local daemon's socket dialled again every 5 ms: nothing shared to
// spread out for, but the application's context, in scope, is not heard.
//
// case: flag deafwait
func dialDaemon(app *App, path string) (net.Conn, error) {
	for attempt := 0; attempt < 1000; attempt++ {
		conn, err := net.Dial("unix", path)
		if err == nil {
			return conn, nil
		}
		time.Sleep(5 * time.Millisecond) // want `deafwait: time.Sleep ignores app`
	}
	return nil, errNoDaemon
}

// The same wait heard through the application's context.
//
// case: clean
func dialDaemonHeard(app *App, path string) (net.Conn, error) {
	for attempt := 0; attempt < 1000; attempt++ {
		conn, err := net.Dial("unix", path)
		if err == nil {
			return conn, nil
		}
		select {
		case <-app.Done():
			return nil, app.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil, errNoDaemon
}

// A peer over TCP dialled again on a constant second: every client that
// lost it comes back at once.
//
// case: flag nojitter
func dialPeer(app *App, addr string) (net.Conn, error) {
	for attempt := 0; attempt < 10; attempt++ {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-app.Done():
			return nil, app.Err()
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
		}
	}
	return nil, errNoDaemon
}
