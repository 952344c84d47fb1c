// Package pauses holds, written anew, retry loops that wait through a
// pause of their own that says whether to go on: false when the owner's
// context is done.
package pauses

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

type replica struct {
	ctx context.Context
	hc  *http.Client
	url string
}

// pause waits a random time up to n seconds; false if the replica's
// context ends first.
func (r *replica) pause(n int) bool {
	timer := time.NewTimer(rand.N(time.Duration(n) * time.Second))
	defer timer.Stop()
	select {
	case <-r.ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// nap waits as pause does but answers true either way.
func (r *replica) nap(n int) bool {
	select {
	case <-r.ctx.Done():
	case <-time.After(rand.N(time.Duration(n) * time.Second)):
	}
	return true
}

// Every failure is tried again until the pause says the replica stopped.
//
// case: clean
func (r *replica) push() bool {
	fails := 0
	for {
		resp, err := r.hc.Get(r.url)
		if err == nil {
			resp.Body.Close()
			return true
		}
		fails++
		if !r.pause(fails) {
			return false
		}
	}
}

// The same with nap, which never says stop: a failing server is asked
// for ever.
//
// case: flag unbounded
func (r *replica) pushForever() bool {
	fails := 0
	for { // want `unbounded: retry loop has no bound`
		resp, err := r.hc.Get(r.url)
		if err == nil {
			resp.Body.Close()
			return true
		}
		fails++
		if !r.nap(fails) {
			return false
		}
	}
}
