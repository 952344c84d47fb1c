// Package bgctx holds, written anew, calls of helpers whose retry or poll
// loop only the context they are handed can end: handed a context nothing
// cancels, a dependency that stays down keeps them going for ever.
package bgctx

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	"example.com/kvlock"
)

// The blocking form of the lock: it waits for ever when the service is
// down.
//
// case: flag unbounded
func lock(l *kvlock.Lock) {
	_ = l.LockContext(context.Background()) // want `unbounded: Lock.LockContext goes round until its context is done, and is handed context.Background\(\)`
}

// The same lock, given up after a minute.
//
// case: clean
func lockWithin(l *kvlock.Lock) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return l.LockContext(ctx)
}

// The caller's context, whatever it is, is the caller's to bound.
//
// case: clean
func lockFor(ctx context.Context, l *kvlock.Lock) error {
	return l.LockContext(ctx)
}

// A feed pulled on a context nothing cancels, kept in a variable.
//
// case: flag unbounded
func pullDetached(hc *http.Client, url string) (*http.Response, error) {
	bg := context.TODO()
	return kvlock.Pull(bg, hc, url) // want `unbounded: kvlock.Pull goes round until its context is done, and is handed context.TODO\(\)`
}

// A helper whose attempts are counted is bounded whatever context it gets.
//
// case: clean
func pullCounted(hc *http.Client, url string) (*http.Response, error) {
	return kvlock.PullN(context.Background(), hc, url, 5)
}

// refresh is this package's own helper: it re-sends a token request
// after a random pause until it succeeds or ctx is done.
func refresh(ctx context.Context, hc *http.Client, url string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(time.Second)):
		}
	}
}

// Started in the background on a context nothing cancels.
//
// case: flag unbounded
func startRefresh(hc *http.Client, url string) {
	go refresh(context.Background(), hc, url) // want `unbounded: refresh goes round until its context is done, and is handed context.Background\(\)`
}
