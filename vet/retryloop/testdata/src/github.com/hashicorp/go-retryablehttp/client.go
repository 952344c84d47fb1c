// Package retryablehttp is a stub of hashicorp/go-retryablehttp: a client
// that retries by a CheckRetry policy and waits by a Backoff.
package retryablehttp

import (
	"context"
	"math/rand"
	"net/http"
	"strconv"
	"time"
)

// Request wraps an http.Request.
type Request struct{ *http.Request }

// CheckRetry says whether to retry.
type CheckRetry func(ctx context.Context, resp *http.Response, err error) (bool, error)

// Backoff says how long to wait before attempt n.
type Backoff func(min, max time.Duration, attemptNum int, resp *http.Response) time.Duration

// Client retries requests.
type Client struct {
	HTTPClient   *http.Client
	RetryWaitMin time.Duration
	RetryWaitMax time.Duration
	RetryMax     int
	CheckRetry   CheckRetry
	Backoff      Backoff
}

// NewClient gives the library's defaults.
func NewClient() *Client {
	return &Client{HTTPClient: http.DefaultClient, RetryWaitMin: time.Second, RetryWaitMax: 30 * time.Second, RetryMax: 4, CheckRetry: DefaultRetryPolicy, Backoff: DefaultBackoff}
}

// DefaultRetryPolicy retries transport errors, 429 and 5xx but 501.
func DefaultRetryPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return true, nil
	}
	if resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented) {
		return true, nil
	}
	return false, nil
}

// DefaultBackoff waits what Retry-After says on a 429 or 503, else min×2^n.
func DefaultBackoff(min, max time.Duration, attemptNum int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			return time.Duration(s) * time.Second
		}
	}
	d := min << attemptNum
	if d > max {
		d = max
	}
	return d
}

// LinearJitterBackoff waits a random time between min and max, times n.
func LinearJitterBackoff(min, max time.Duration, attemptNum int, resp *http.Response) time.Duration {
	return time.Duration(attemptNum) * (min + time.Duration(rand.Int63n(int64(max-min)+1)))
}

// Do sends req until CheckRetry says stop.
func (c *Client) Do(req *Request) (*http.Response, error) {
	for i := 0; ; i++ {
		resp, err := c.HTTPClient.Do(req.Request)
		ok, cerr := c.CheckRetry(req.Context(), resp, err)
		if !ok || i >= c.RetryMax {
			if cerr != nil {
				return resp, cerr
			}
			return resp, err
		}
		t := time.NewTimer(c.Backoff(c.RetryWaitMin, c.RetryWaitMax, i, resp))
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
	}
}
