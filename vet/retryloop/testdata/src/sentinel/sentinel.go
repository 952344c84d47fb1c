// Package sentinel holds, written anew, an API client that turns statuses
// into errors of its own (errTooManyRequests for a 429) inside the helper
// that makes the call, and loops that retry on those errors.
package sentinel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

var (
	errTooManyRequests = errors.New("too many requests")
	errConflict        = errors.New("conflict")
	// ErrRateLimited is the client's answer to a 429, for its callers.
	ErrRateLimited = errors.New("rate limited") // want ErrRateLimited:`status=429`
	// errBusy is returned for a 429 and for a 500 alike.
	errBusy = errors.New("busy")
)

// Client calls an upload API.
type Client struct {
	hc *http.Client
}

// doRequest makes the call and turns the answer's status into an error.
func (c *Client) doRequest(ctx context.Context, method, url string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	return resp, nil
}

// checkResponse makes an error of a status that is no success.
func checkResponse(r *http.Response) error {
	if r.StatusCode >= 200 && r.StatusCode <= 299 {
		return nil
	}
	if r.StatusCode == http.StatusTooManyRequests {
		return errTooManyRequests
	}
	if r.StatusCode == http.StatusConflict {
		return errConflict
	}
	return fmt.Errorf("server returned %s", r.Status)
}

// Do calls the API and makes its own rate-limit error of a 429.
func (c *Client) Do(ctx context.Context, url string) (*http.Response, error) { // want Do:`remote=1 waits=false deaf=false jitter=0`
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		resp.Body.Close()
		return nil, ErrRateLimited
	}
	return resp, nil
}

// busy makes the same error of a 429 and a 500.
func (c *Client) busy(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		resp.Body.Close()
		return nil, errBusy
	}
	if resp.StatusCode == http.StatusInternalServerError {
		resp.Body.Close()
		return nil, errBusy
	}
	return resp, nil
}

// pause waits a random time up to d, or until ctx is done.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(rand.N(d)):
		return nil
	}
}

// Finishing an upload goes round only while the server says 429, which
// doRequest makes errTooManyRequests, and never reads its Retry-After.
//
// case: flag retryafter
func (c *Client) finish(ctx context.Context, url string) error {
	for attempt := 0; attempt < 5; attempt++ {
		resp, err := c.doRequest(ctx, http.MethodPost, url, nil)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if !errors.Is(err, errTooManyRequests) {
			return err
		}
		if err := pause(ctx, time.Second<<attempt); err != nil { // want `retryafter: retry loop retries 429 without reading Retry-After`
			return err
		}
	}
	return errors.New("upload not finished")
}

// The same upload goes round on a conflict (409) only: the server said
// nothing about when to come back.
//
// case: clean
func (c *Client) finishOnConflict(ctx context.Context, url string) error {
	for attempt := 0; attempt < 5; attempt++ {
		resp, err := c.doRequest(ctx, http.MethodPost, url, nil)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if !errors.Is(err, errConflict) {
			return err
		}
		if err := pause(ctx, time.Second<<attempt); err != nil {
			return err
		}
	}
	return errors.New("upload not finished")
}

// An error that stands for a 429 and a 500 alike says no one status: the
// loop is not held to have retried a 429.
//
// case: clean
func (c *Client) fetchBusy(ctx context.Context, url string) (*http.Response, error) {
	for attempt := 0; attempt < 5; attempt++ {
		resp, err := c.busy(ctx, url)
		if err == nil {
			return resp, nil
		}
		if err != errBusy {
			return nil, err
		}
		if err := pause(ctx, time.Second<<attempt); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("still busy")
}
