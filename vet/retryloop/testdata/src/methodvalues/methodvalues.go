// want package:"offline"

// Package methodvalues holds, written anew, loops whose attempt is a
// method value or a named function handed to a helper that calls it
// (timed(a.checkIn)), beside twins that hand the helper a literal.
package methodvalues

import (
	"context"
	"math/rand/v2"
	"os"
	"time"

	"example.com/pb"
)

type agent struct {
	client  pb.GreeterClient
	ctx     context.Context
	lastErr error
	last    string
	dir     string
}

// checkIn asks the control plane once; a failure is kept for the next
// report, not returned.
func (a *agent) checkIn() {
	reply, err := a.client.SayHello(a.ctx, &pb.HelloRequest{Name: "agent"})
	if err != nil {
		a.lastErr = err
		return
	}
	a.last = reply.Message
}

// tidy removes the agent's scratch directory: local work.
func (a *agent) tidy() {
	a.lastErr = os.RemoveAll(a.dir)
}

// timed runs f and says how long it took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// Checked in again until the agent stops; a quick return is taken for a
// failure and the wait doubles, with nothing random in it.
//
// case: flag nojitter
func (a *agent) keepCheckingIn() {
	interval := time.Second
	timer := time.NewTimer(interval)
	for a.ctx.Err() == nil {
		if timed(a.checkIn) < time.Second {
			interval = min(2*interval, 30*time.Second)
		} else {
			interval = time.Second
		}
		select {
		case <-timer.C:
			timer.Reset(interval) // want `nojitter: this wait in a retry loop`
		case <-a.ctx.Done():
		}
	}
}

// keepCheckingIn with the attempt in a literal.
//
// case: flag nojitter
func (a *agent) keepCheckingInLit() {
	interval := time.Second
	timer := time.NewTimer(interval)
	for a.ctx.Err() == nil {
		if timed(func() { a.checkIn() }) < time.Second {
			interval = min(2*interval, 30*time.Second)
		} else {
			interval = time.Second
		}
		select {
		case <-timer.C:
			timer.Reset(interval) // want `nojitter: this wait in a retry loop`
		case <-a.ctx.Done():
		}
	}
}

// keepCheckingIn with each wait drawn at random.
//
// case: clean
func (a *agent) keepCheckingInJittered() {
	interval := time.Second
	timer := time.NewTimer(interval)
	for a.ctx.Err() == nil {
		if timed(a.checkIn) < time.Second {
			interval = min(2*interval, 30*time.Second)
		} else {
			interval = time.Second
		}
		select {
		case <-timer.C:
			timer.Reset(rand.N(interval))
		case <-a.ctx.Done():
		}
	}
}

// The same schedule around local work: no dependency to spread out for.
//
// case: clean
func (a *agent) keepTidying() {
	interval := time.Second
	timer := time.NewTimer(interval)
	for a.ctx.Err() == nil {
		if timed(a.tidy) < time.Second {
			interval = min(2*interval, 30*time.Second)
		} else {
			interval = time.Second
		}
		select {
		case <-timer.C:
			timer.Reset(interval)
		case <-a.ctx.Done():
		}
	}
}
