// Package notyet holds, written anew, loops over a helper whose error
// says "not yet" as well as "failed": it returns a sentinel of its own
// after its call succeeded, when what it found is not ready.
package notyet

import (
	"context"
	"errors"
	"net/http"
	"time"
)

var errNotReady = errors.New("no ready endpoint")

var errUnavailable = errors.New("unavailable")

// lister lists a service's endpoints over HTTP.
type lister struct{ hc *http.Client }

// List returns the endpoints that are up.
func (l *lister) List(ctx context.Context, svc string) ([]string, error) { // want List:`remote=1 waits=false deaf=false jitter=0`
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://registry/"+svc, nil)
	if err != nil {
		return nil, err
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return nil, nil
}

// ready answers errNotReady when the list came back without svc in it.
func ready(ctx context.Context, l *lister, svc string) error {
	eps, err := l.List(ctx, svc)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if ep == svc {
			return nil
		}
	}
	return errNotReady
}

// waitReady polls until the service has an endpoint; any other error
// ends it. A poll for a state, each round a success that says "not yet".
//
// case: clean
func waitReady(ctx context.Context, l *lister, svc string) error {
	for {
		err := ready(ctx, l, svc)
		if err == nil {
			return nil
		}
		if err != errNotReady {
			return err
		}
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// lookup answers errUnavailable only when its call failed.
func lookup(ctx context.Context, l *lister, svc string) error {
	if _, err := l.List(ctx, svc); err != nil {
		return errUnavailable
	}
	return nil
}

// lookupRetry goes round when the call failed, after a constant wait.
//
// case: flag nojitter
func lookupRetry(ctx context.Context, l *lister, svc string) error {
	for range 3 {
		err := lookup(ctx, l, svc)
		if err != errUnavailable {
			return err
		}
		select {
		case <-time.After(5 * time.Second): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errUnavailable
}
