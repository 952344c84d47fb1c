// want package:"offline"

// Package stopctx holds contexts a function makes from
// context.Background(): one a goroutine cancels when a stop channel closes
// is a live stop, and a sleep beside it is deaf; one only deferred or
// handed to a dial is the function's own.
package stopctx

import (
	"context"
	"math/rand/v2"
	"time"
)

type elector struct {
	lock    func(ctx context.Context) error
	backoff time.Duration
}

func jittered(d time.Duration) time.Duration { return rand.N(d) }

// The stop channel cancels ctx, but the pause between rounds sleeps
// through it.
//
// case: flag deafwait
func (e *elector) run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stop
		cancel()
	}()
	for {
		_ = e.lock(ctx)
		select {
		case <-stop:
			return
		default:
		}
		time.Sleep(jittered(e.backoff)) // want `deafwait: time.Sleep ignores ctx`
	}
}

// The same goroutine, the pause in a select on ctx.Done().
//
// case: clean
func (e *elector) runHeard(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stop
		cancel()
	}()
	for {
		_ = e.lock(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(jittered(e.backoff)):
		}
	}
}

// A context of its own for each round's lock, cancelled when the round
// ends: nothing cancels it while the loop sleeps, and the stop channel is
// asked between rounds.
//
// case: clean
func (e *elector) runEachRound(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = e.lock(ctx)
		cancel()
		time.Sleep(jittered(e.backoff))
	}
}

// The context only bounds the lock calls and is cancelled when the
// function returns: nothing cancels it while the loop sleeps.
//
// case: clean
func (e *elector) runDeferred(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		_ = e.lock(ctx)
		select {
		case <-stop:
			return
		default:
		}
		time.Sleep(jittered(e.backoff))
	}
}
