// Package owndeadline holds, written anew, loops that go round on success
// too (a store re-made when its settings changed, a feed read on) and wait
// a constant pause after a DeadlineExceeded from a call made on a context
// of the function's own: the call's own timeout, a failure of the
// dependency, not the caller giving up.
package owndeadline

import (
	"context"
	"errors"
	"net/http"
	"time"
)

var errExists = errors.New("exists")

type store struct{ ttl time.Duration }

// open asks the server for a store; it fails with DeadlineExceeded when
// the server does not answer in time.
func open(ctx context.Context, name string) (*store, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://kv/"+name, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return &store{}, nil
}

func drop(name string) {}

// A timed-out open is tried again after a constant half second; a store
// with other settings is dropped and made again.
//
// case: flag nojitter
func openStore(name string, ttl time.Duration) (*store, error) {
	tries := 5
again:
	s, err := open(context.Background(), name)
	if err != nil {
		if context.DeadlineExceeded == err && tries > 0 {
			tries--
			time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop`
			goto again
		}
		if !errors.Is(err, errExists) {
			return nil, err
		}
		s, err = &store{}, nil
	}
	if s.ttl != ttl {
		drop(name)
		goto again
	}
	return s, nil
}

// The same in a for loop, each attempt under its own two-second timeout.
//
// case: flag nojitter
func openStoreTimed(name string, ttl time.Duration) (*store, error) {
	for tries := 0; ; tries++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s, err := open(ctx, name)
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && tries < 5 {
				time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
				continue
			}
			return nil, err
		}
		if s.ttl != ttl {
			drop(name)
			continue
		}
		return s, nil
	}
}

// The caller's context: a DeadlineExceeded is the caller's deadline, not
// the server's failure, and the pause after it no retry's.
//
// case: clean
func openStoreCaller(ctx context.Context, name string, ttl time.Duration) (*store, error) {
	for tries := 0; ; tries++ {
		s, err := open(ctx, name)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && tries < 5 {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(time.Second):
				}
				continue
			}
			return nil, err
		}
		if s.ttl != ttl {
			drop(name)
			continue
		}
		return s, nil
	}
}

// A goto loop that goes round on success too (a store with other
// settings made again) and waits a constant second after any failure.
//
// case: flag nojitter
func openStoreAny(name string, ttl time.Duration) (*store, error) {
	tries := 5
again:
	s, err := open(context.Background(), name)
	if err != nil {
		if tries > 0 {
			tries--
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			goto again
		}
		return nil, err
	}
	if s.ttl != ttl {
		drop(name)
		goto again
	}
	return s, nil
}
