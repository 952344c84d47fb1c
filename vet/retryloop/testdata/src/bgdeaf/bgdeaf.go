// want package:"offline"

// Package bgdeaf holds, written anew, retries through a library entry
// point that waits on a context.Background() of its own while the caller
// has a context in scope.
package bgdeaf

import (
	"context"
	"math/rand/v2"
	"time"

	"example.com/tryagain"
)

type releases interface {
	Publish(ctx context.Context, tag string) error
}

// publish retries through tryagain.Retry, whose waits hear only the
// Background it makes: ctx cannot cut them short. The interval, drawn
// once, is the same every round: nojitter too.
//
// case: flag nojitter deafwait
func publish(ctx context.Context, r releases, tag string) error {
	return tryagain.Retry(3, rand.N(3*time.Second), func() error { // want `deafwait: Retry waits on a context of its own \(context.Background\) and cannot hear ctx` `nojitter: tryagain.Retry waits a constant`
		return r.Publish(ctx, tag)
	})
}

// publishHeard is its twin through the entry point that takes ctx.
//
// case: flag nojitter
func publishHeard(ctx context.Context, r releases, tag string) error {
	return tryagain.WithContext(ctx, 3, rand.N(3*time.Second), func() error { // want `nojitter: tryagain.WithContext waits a constant`
		return r.Publish(ctx, tag)
	})
}

// publishDetached hands the context-taking entry point a Background of
// its own while ctx is in scope: the caller chose to detach the retries,
// and the library's waits hear the context they are given.
//
// case: flag nojitter
func publishDetached(ctx context.Context, r releases, tag string) error {
	return tryagain.WithContext(context.Background(), 3, rand.N(3*time.Second), func() error { // want `nojitter: tryagain.WithContext waits a constant`
		return r.Publish(ctx, tag)
	})
}
