// Package clonedcfg holds, written anew, loops that wait what a backoff
// type of another package says, a type whose Clone copies its settings:
// the copy is no value of the settings' own, so the schedule is what the
// loop's own literal gives.
package clonedcfg

import (
	"context"
	"net"
	"time"

	"example.com/clonebackoff"
)

type resolver struct {
	ctx  context.Context
	host string
}

func (r *resolver) lookup() error {
	_, _, err := net.DefaultResolver.LookupSRV(r.ctx, "", "", r.host)
	return err
}

// A failed lookup waits the next exponential step, with no jitter.
//
// case: flag nojitter
func (r *resolver) watch() {
	b := &clonebackoff.Exponential{Min: time.Second, Max: 2 * time.Minute, Factor: 1.6}
	for {
		if err := r.lookup(); err != nil {
			t := time.NewTimer(b.Next()) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
			select {
			case <-r.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		b.Reset()
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(time.Hour):
		}
	}
}

// The jittered type's twin.
//
// case: clean
func (r *resolver) watchJittered() {
	b := &clonebackoff.Jittered{Min: time.Second, Max: 2 * time.Minute}
	for {
		if err := r.lookup(); err != nil {
			t := time.NewTimer(b.Next())
			select {
			case <-r.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(time.Hour):
		}
	}
}
