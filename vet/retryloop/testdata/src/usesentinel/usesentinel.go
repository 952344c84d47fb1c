// Package usesentinel holds, written anew, a caller of another package's
// client that retries on the client's rate-limit error.
package usesentinel

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"sentinel"
)

// The client makes ErrRateLimited of a 429; a loop that goes round on it
// retries the 429 without the server's Retry-After.
//
// case: flag retryafter
func fetch(ctx context.Context, c *sentinel.Client, url string) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := c.Do(ctx, url)
		if err == nil {
			return resp, nil
		}
		if err != sentinel.ErrRateLimited {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second << attempt)): // want `retryafter: retry loop retries 429 without reading Retry-After`
		}
	}
	return nil, errors.New("rate limited")
}

// The same caller giving up at once on the rate-limit error, and going
// round on a failed connection only.
//
// case: clean
func fetchNoRateRetry(ctx context.Context, c *sentinel.Client, url string) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := c.Do(ctx, url)
		if err == nil {
			return resp, nil
		}
		if errors.Is(err, sentinel.ErrRateLimited) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second << attempt)):
		}
	}
	return nil, errors.New("unreachable")
}
