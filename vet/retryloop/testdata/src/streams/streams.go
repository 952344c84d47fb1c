// want package:"offline"

// Package streams holds loops that open a watch again each time the last
// one ends. A watch's channel closes when the watch fails or is cancelled,
// so the wait before the next one paces a retry.
package streams

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"example.com/watch"
)

type source struct {
	client *watch.Client
	key    string
	rev    int64
	closed atomic.Bool
	cancel context.CancelFunc
}

func (s *source) handle(ev watch.Event) { s.rev = ev.Revision }

// Re-watched a constant second after each end, forever: Close cancels
// only the current watch.
//
// case: flag nojitter unbounded
func (s *source) watch() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	rch := s.client.Watch(ctx, s.key, s.rev)
	for { // want `unbounded: retry loop has no bound`
		for ev := range rch {
			s.handle(ev)
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
		ctx, cancel = context.WithCancel(context.Background())
		s.cancel = cancel
		rch = s.client.Watch(ctx, s.key, s.rev)
	}
}

// The same, left when the source is closed: still a constant second.
//
// case: flag nojitter
func (s *source) watchUntilClosed() {
	for {
		for ev := range s.client.Watch(context.Background(), s.key, s.rev) {
			s.handle(ev)
		}
		if s.closed.Load() {
			return
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
}

// A jittered wait, and the caller's context ends it.
//
// case: clean
func (s *source) watchCtx(ctx context.Context) {
	for {
		for ev := range s.client.Watch(ctx, s.key, s.rev) {
			s.handle(ev)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(rand.N(time.Second)):
		}
	}
}

// A channel of the function's own, filled by a goroutine it starts each
// round: no stream of a dependency ends here, and the pause is a schedule.
//
// case: clean
func (s *source) batches(produce func(chan<- watch.Event)) {
	for {
		ch := make(chan watch.Event)
		go func() {
			produce(ch)
			close(ch)
		}()
		for ev := range ch {
			s.handle(ev)
		}
		if s.closed.Load() {
			return
		}
		time.Sleep(time.Second)
	}
}
