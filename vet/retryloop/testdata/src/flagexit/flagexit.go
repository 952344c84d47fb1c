// Package flagexit holds, written anew, loops whose condition tests a flag
// the body sets: the path that sets it leaves the loop at the next test of
// the condition, as a break would.
package flagexit

import (
	"context"
	"errors"
	"math/rand"
	"net"
	"time"
)

// store is where a part is restored from: a peer reached over the
// network, its errors those of the connection.
type store struct{ peer net.Conn }

func (s *store) restore(part int) error {
	_, err := s.peer.Write([]byte{byte(part)})
	return err
}

// A failed restore waits a constant second and goes round; a good one sets
// ok, and the condition ends the loop.
//
// case: flag nojitter
func restoreAll(s *store, stop <-chan struct{}) error {
	ok := false
	for i := 0; !ok && i < 10; i++ {
		if err := s.restore(i); err != nil {
			select {
			case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
			case <-stop:
				return errors.New("stopping")
			}
		} else {
			ok = true
		}
	}
	if !ok {
		return errors.New("could not restore")
	}
	return nil
}

// The same loop with the flag written the other way round: done is the
// loop's own condition, set false on failure and true on success.
//
// case: flag nojitter
func restoreUntilDone(s *store) error {
	done := false
	for tries := 0; !done && tries < 5; tries++ {
		err := s.restore(tries)
		done = err == nil
		if err != nil {
			time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop`
		}
	}
	return nil
}

// The same loop with a jittered wait heard on ctx: clean.
//
// case: clean
func restoreJittered(ctx context.Context, s *store) error {
	ok := false
	for i := 0; !ok && i < 10; i++ {
		if err := s.restore(i); err != nil {
			select {
			case <-time.After(time.Duration(rand.Int63n(int64(time.Second << i)))):
			case <-ctx.Done():
				return ctx.Err()
			}
		} else {
			ok = true
		}
	}
	return nil
}

// A poll: the flag is set only when the job says it is finished, and the
// loop waits after every look, the good ones included. Not a retry loop.
//
// case: clean
func waitFinished(ctx context.Context, s *store) {
	finished := false
	for !finished && ctx.Err() == nil {
		if err := s.restore(0); err == nil {
			finished = s.peer.RemoteAddr() == nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// A flag is the loop's only way out: a retry loop with no bound, which it
// is taken for only once the flag's path is seen to leave.
//
// case: flag nojitter unbounded
func restoreForever(s *store) {
	ok := false
	for !ok { // want `unbounded: retry loop has no bound`
		if err := s.restore(0); err != nil {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
		} else {
			ok = true
		}
	}
}
