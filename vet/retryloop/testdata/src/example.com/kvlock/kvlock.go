// Package kvlock is a stand-in, written anew, for a lock kept in a shared
// key-value service and a feed kept in sync with one: each waits and goes
// round until it succeeds, and only the context its caller hands in ends a
// run of failures.
package kvlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// Lock is a lock held in a key-value service.
type Lock struct {
	hc  *http.Client
	url string
}

var errHeld = errors.New("held")

// try asks the service for the lock once.
func (l *Lock) try(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, l.url, nil)
	if err != nil {
		return false, err
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusCreated, nil
}

// LockContext waits until the lock is taken or ctx is done, asking again
// after a random pause whether the lock was held or the service failed.
func (l *Lock) LockContext(ctx context.Context) error {
	for {
		ok, err := l.try(ctx)
		if err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(2 * time.Second)):
		}
	}
}

// Pull fetches the feed, sending again after a random pause on a failed
// connection, until it answers or ctx is done.
func Pull(ctx context.Context, hc *http.Client, url string) (*http.Response, error) {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err == nil {
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second)):
		}
	}
}

// PullN is Pull with at most n attempts.
func PullN(ctx context.Context, hc *http.Client, url string, n int) (*http.Response, error) {
	var last error
	for i := 0; i < n; i++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err == nil {
			return resp, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second)):
		}
	}
	return nil, last
}
