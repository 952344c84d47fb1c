// want package:"offline"

// Package aliasctx holds, written anew, a stream reconnect whose context
// comes from golang.org/x/net/context, an alias of the standard one.
package aliasctx

import (
	"errors"
	"time"

	"golang.org/x/net/context"
)

type service struct {
	open  func(ctx context.Context) error
	tries int
}

// reconnect opens the stream again after a sleep that cannot hear the
// caller's context, whichever package named its type.
//
// case: flag nojitter deafwait
func (s *service) reconnect(ctx context.Context) {
	for try := 0; try < s.tries; try++ {
		if err := s.open(ctx); err == nil || errors.Is(err, context.Canceled) {
			return
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop` `deafwait: time.Sleep ignores ctx`
	}
}

// Each try under a timeout of its own, made from Background: a sleep deaf
// to it misses nothing, no caller's cancellation being in it.
//
// case: flag nojitter
func (s *service) openEach() {
	for try := 0; try < s.tries; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.open(ctx)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
}
