// Package pkgerrs holds, written anew, a client whose errors come from
// github.com/pkg/errors: its helper turns a 429 into errTooManyRequests
// and wraps it on the way out.
package pkgerrs

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/pkg/errors"
)

var (
	errTooManyRequests = errors.New("too many requests")
	errNotFound        = errors.New("not found")
)

// client calls a block store's API.
type client struct {
	hc *http.Client
}

// do makes the call and turns a status that is no success into an error.
func (c *client) do(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if err := check(resp); err != nil {
		resp.Body.Close()
		return nil, errors.Wrapf(err, "POST %s", url)
	}
	return resp, nil
}

// check makes an error of a status that is no success.
func check(r *http.Response) error {
	if r.StatusCode/100 == 2 {
		return nil
	}
	if r.StatusCode == http.StatusNotFound {
		return errNotFound
	}
	if r.StatusCode == http.StatusTooManyRequests {
		return errTooManyRequests
	}
	return errors.Errorf("server returned %s", r.Status)
}

// The upload is finished again while the server answers 429, its
// Retry-After unread.
//
// case: flag retryafter
func (c *client) finish(ctx context.Context, url string) error {
	for attempt := 0; attempt < 5; attempt++ {
		resp, err := c.do(ctx, url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if !errors.Is(err, errTooManyRequests) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(time.Second << attempt)): // want `retryafter: retry loop retries 429 without reading Retry-After`
		}
	}
	return errors.New("not finished")
}

// The same loop going round on a 404 until the upload appears: a wait
// for something to exist, a poll, and the server said nothing about when.
//
// case: clean
func (c *client) finishWhenFound(ctx context.Context, url string) error {
	for attempt := 0; attempt < 5; attempt++ {
		resp, err := c.do(ctx, url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if !errors.Is(err, errNotFound) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(time.Second << attempt)):
		}
	}
	return errors.New("not finished")
}
