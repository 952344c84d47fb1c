// Package pollfolds holds, written anew, a chat bot's long poll for
// updates: the answer is relayed and the next request sent at once, and a
// failure waits five seconds first. Its fetch turns any status but 200
// into an error, so that wait is reached on a 401 (a revoked token) and a
// 429 as much as on a 503. Beside it, twins: a fetch whose error is only
// the transport's, and a poll that stops on a status that will not
// change.
package pollfolds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// StatusError is a non-200 answer.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("status %d", e.Code) }

type bot struct {
	hc  *http.Client
	url string
}

func relay(*http.Response) {}

// fetch asks for the next updates; any status but 200 is an error.
func (b *bot) fetch(ctx context.Context) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &StatusError{Code: resp.StatusCode}
	}
	return resp, nil
}

// getUpdates is fetch with the error wrapped: it folds the status too.
func (b *bot) getUpdates(ctx context.Context) (*http.Response, error) {
	resp, err := b.fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("get updates: %w", err)
	}
	return resp, nil
}

// poll relays updates until ctx ends; every failure waits 5 s and goes
// round.
//
// case: flag unclassified nojitter retryafter
func (b *bot) poll(ctx context.Context) {
	for { // want `unclassified: retry loop around bot.getUpdates retries on every error`
		resp, err := b.getUpdates(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
			}
			continue
		}
		relay(resp)
	}
}

// pollStopping is poll that gives up on a status that will not change,
// and leaves the rest to a jittered wait that reads nothing the server
// said: only its Retry-After is missing.
//
// case: flag nojitter retryafter
func (b *bot) pollStopping(ctx context.Context) error {
	for {
		resp, err := b.getUpdates(ctx)
		var se *StatusError
		if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 && se.Code != http.StatusTooManyRequests {
			return err
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
			}
			continue
		}
		relay(resp)
	}
}

// dial fetches without looking at the status: its error is the
// transport's only.
func (b *bot) dial(ctx context.Context) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url, nil)
	if err != nil {
		return nil, err
	}
	return b.hc.Do(req)
}

// stream is poll's twin over dial: only what never reached the server
// waits and goes round; every answer is relayed.
//
// case: flag nojitter
func (b *bot) stream(ctx context.Context) {
	for {
		resp, err := b.dial(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second): // want `nojitter: this wait in a retry loop`
			}
			continue
		}
		relay(resp)
	}
}
