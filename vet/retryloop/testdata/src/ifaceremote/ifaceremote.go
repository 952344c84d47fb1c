// Package ifaceremote holds, written anew, a session helper that
// authorises through an API package's interface, and the loops that
// retry it.
package ifaceremote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"example.com/performer"
)

// Auth opens sessions.
type Auth struct {
	client  performer.RequestPerformer
	fetcher performer.Fetcher
}

// authorize asks for a session; any status but 200 is an error.
func (a *Auth) authorize(ctx context.Context) (string, error) {
	resp, err := a.client.PerformRequest(ctx, http.MethodPost, "/sessions")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("authorization failed, status=%d", resp.StatusCode)
	}
	return resp.Header.Get("Session"), nil
}

// createSession asks again after a second on every error, a 401 and a
// 429 alike, six times at most: the interface's one implementation is
// an HTTP client.
//
// case: flag unclassified nojitter retryafter
func (a *Auth) createSession(ctx context.Context) (string, error) {
	var err error
	for i := 0; i <= 5; i++ { // want `unclassified: retry loop around Auth.authorize retries on every error`
		var s string
		if s, err = a.authorize(ctx); err == nil {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
		}
	}
	return "", err
}

// load reads a document through a fetcher that may be the disk.
func (a *Auth) load(ctx context.Context) error {
	resp, err := a.fetcher.Fetch(ctx, "/etc/session")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New("not loaded")
	}
	return nil
}

// loadSession asks the fetcher again after a second on every error: the
// fetcher may be the disk, so only the wait is judged.
//
// case: flag nojitter
func (a *Auth) loadSession(ctx context.Context) error {
	var err error
	for i := 0; i <= 5; i++ {
		if err = a.load(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
		}
	}
	return err
}
