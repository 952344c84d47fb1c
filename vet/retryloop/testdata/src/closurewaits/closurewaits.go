// want package:"offline"

// Package closurewaits holds, written anew, retry loops whose wait sits in
// a local function literal the loop calls on each failure.
package closurewaits

import (
	"context"
	"errors"
	"log"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jpillora/backoff"
)

type session struct {
	closed int32
	dial   func() (any, error)
	auth   func(any) error
}

// A reconnect whose failures all go through failTemp, which sleeps the
// backoff's next duration: a jpillora Backoff without Jitter.
//
// case: flag nojitter
func (s *session) reconnect() error {
	boff := &backoff.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second, Factor: 2}
	failTemp := func(err error) {
		log.Printf("reconnect: %v", err)
		time.Sleep(boff.Duration())
	}
	for try := 0; try < 20; try++ {
		if atomic.LoadInt32(&s.closed) == 1 {
			return errors.New("closed")
		}
		raw, err := s.dial()
		if err != nil {
			failTemp(err) // want `nojitter: failTemp in a retry loop`
			continue
		}
		if err := s.auth(raw); err != nil {
			failTemp(err) // want `nojitter: failTemp in a retry loop`
			continue
		}
		return nil
	}
	return errors.New("gave up")
}

// The same with the caller's context in scope: the literal's sleep is
// deaf to it, and is reported where it stands.
//
// case: flag nojitter deafwait
func (s *session) reconnectCtx(ctx context.Context) error {
	pause := func() {
		time.Sleep(2 * time.Second) // want `deafwait: time.Sleep ignores ctx`
	}
	for ctx.Err() == nil {
		if _, err := s.dial(); err != nil {
			pause() // want `nojitter: pause in a retry loop`
			continue
		}
		return nil
	}
	return ctx.Err()
}

// The literal draws its wait at random.
//
// case: clean
func (s *session) reconnectSpread(ctx context.Context) error {
	pause := func(n int) {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(rand.Int64N(int64(time.Second) << n))):
		}
	}
	for n := 0; n < 8; n++ {
		if _, err := s.dial(); err == nil {
			return nil
		}
		pause(n)
	}
	return errors.New("gave up")
}

// The literal only logs; the loop's own wait is spread.
//
// case: clean
func (s *session) reconnectLogged(ctx context.Context) error {
	note := func(err error) { log.Printf("dial: %v", err) }
	for n := 0; n < 8; n++ {
		_, err := s.dial()
		if err == nil {
			return nil
		}
		note(err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(time.Second) << n))):
		}
	}
	return errors.New("gave up")
}

type watcher struct {
	open   func() (<-chan string, error)
	events chan string
}

// A re-watch loop: execute says whether to go again beside its error,
// false beside every error, true when a healthy watch ended. Only the
// sleep's deafness to ctx is wrong.
//
// case: flag deafwait
func (w *watcher) watch(ctx context.Context) {
	execute := func() (bool, error) {
		ch, err := w.open()
		if err != nil {
			return false, err
		}
		for {
			select {
			case ev, ok := <-ch:
				if !ok {
					return true, nil
				}
				w.events <- ev
			case <-ctx.Done():
				return false, nil
			}
		}
	}
	for {
		again, err := execute()
		if err != nil {
			log.Printf("watch: %v", err)
		}
		if !again {
			return
		}
		time.Sleep(time.Second) // want `deafwait: time.Sleep ignores ctx`
	}
}

// The same shape where execute asks to go again beside an error: a
// failed open is retried every second.
//
// case: flag nojitter deafwait
func (w *watcher) watchRetrying(ctx context.Context) {
	execute := func() (bool, error) {
		ch, err := w.open()
		if err != nil {
			return true, err
		}
		for ev := range ch {
			w.events <- ev
		}
		return false, nil
	}
	for ctx.Err() == nil {
		again, err := execute()
		if !again {
			return
		}
		log.Printf("watch: %v", err)
		time.Sleep(time.Second) // want `deafwait: time.Sleep ignores ctx` `nojitter: this wait in a retry loop`
	}
}

type tree struct{ kids []*tree }

// A walk held in a variable that calls itself: reading its waits must not
// follow it round for ever. The retry's only pause is the walk's own
// millisecond per node, part of the attempt.
//
// case: clean
func walkAll(root *tree, visit func(*tree) error) error {
	var walk func(n *tree) error
	walk = func(n *tree) error {
		for _, k := range n.kids {
			if err := walk(k); err != nil {
				return err
			}
		}
		return visit(n)
	}
	var err error
	for i := 0; i < 3; i++ {
		if err = walk(root); err == nil {
			return nil
		}
	}
	return err
}
