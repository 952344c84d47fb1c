// Package ownctx holds, written anew, loops that make their own context
// from context.Background(): one a watch goroutine stops by cancelling it
// (its sleep outlasts the stop), one a dial timeout the loop never asks
// about (nothing waits on it to end).
package ownctx

import (
	"context"
	"math/rand"
	"net"
	"time"
)

// watcher keeps a watch open until stopped.
type watcher struct {
	stop  context.CancelFunc
	watch func(ctx context.Context) error
}

// start watches in a goroutine until stop is called; after a failed watch
// it sleeps a jittered while that stop cannot cut short.
//
// case: flag deafwait
func (w *watcher) start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			default:
				if err := w.watch(ctx); err != nil {
					time.Sleep(time.Duration(rand.Int63n(int64(5 * time.Second)))) // want `deafwait: time.Sleep ignores ctx`
				}
			}
		}
	}()
}

// dialRetry gives each dial five seconds of its own; the pause between
// dials has no context to hear.
//
// case: clean
func dialRetry(addr string) (net.Conn, error) {
	var err error
	for try := 0; try < 4; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var d net.Dialer
		var conn net.Conn
		conn, err = d.DialContext(ctx, "tcp", addr)
		cancel()
		if err == nil {
			return conn, nil
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second << try))))
	}
	return nil, err
}
