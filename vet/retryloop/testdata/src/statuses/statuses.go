// Package statuses holds clients that read a status through their own
// response or error types, and retry the statuses of a set. Written for
// these tests.
package statuses

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// APIError is a non-2xx answer.
type APIError struct{ code int }

func (e *APIError) Error() string { return fmt.Sprintf("status %d", e.code) }

// HTTPCode is the answer's status.
func (e *APIError) HTTPCode() int { return e.code }

// StatusCode is the answer's status.
func (e *APIError) StatusCode() int { return e.code }

// Client sends requests.
type Client struct {
	hc      *http.Client
	retryOn map[int]bool
	pause   func(n int) time.Duration
	tries   int
}

// New makes a client that retries 502, 503 and 504.
func New(hc *http.Client) *Client {
	c := &Client{hc: hc, tries: 3}
	if c.retryOn == nil {
		c.retryOn = map[int]bool{502: true, 503: true, 504: true}
	}
	if c.pause == nil {
		c.pause = func(n int) time.Duration { return time.Duration(n) * 500 * time.Millisecond }
	}
	return c
}

// WithRetryOn sets the statuses to retry.
func WithRetryOn(c *Client, codes []int) {
	c.retryOn = make(map[int]bool)
	for _, s := range codes {
		c.retryOn[s] = true
	}
}

func (c *Client) post(req *http.Request) error {
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return &APIError{code: resp.StatusCode}
	}
	return nil
}

func transient(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500 && code < 510
}

// case: flag nojitter retryafter
func (c *Client) postRetrying(ctx context.Context, req *http.Request) error {
	var err error
	for n := 0; n < c.tries; n++ {
		err = c.post(req)
		if err == nil {
			return nil
		}
		var apiErr *APIError
		isAPI := errors.As(err, &apiErr)
		if !isAPI || !transient(apiErr.HTTPCode()) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second << n): // want `nojitter: this wait` `retryafter: retry loop retries 429 and 503`
		}
	}
	return err
}

// case: flag nojitter retryafter
func (c *Client) doSet(req *http.Request) (*http.Response, error) {
	for n := 1; ; n++ {
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		if !c.retryOn[resp.StatusCode] || n > c.tries {
			return resp, nil
		}
		resp.Body.Close()
		t := time.NewTimer(c.pause(n)) // want `nojitter: this wait` `retryafter: retry loop retries 503`
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
	}
}

var gatewayCodes = []int{502, 504}

// case: flag nojitter
func (c *Client) doGateway(ctx context.Context, req *http.Request) (*http.Response, error) {
	for n := 0; n < 4; n++ {
		resp, err := c.hc.Do(req.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(gatewayCodes, resp.StatusCode) {
			return resp, nil
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second): // want `nojitter: this wait`
		}
	}
	return nil, errors.New("gave up")
}

// Response is the client's own answer, with the status of the
// *http.Response it embeds.
type Response struct {
	*http.Response
}

var errBadBucket = errors.New("bad bucket")

func (c *Client) send(ctx context.Context, req *http.Request) (*Response, error) {
	resp, err := c.hc.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	r := &Response{resp}
	if resp.StatusCode >= 300 {
		return r, &APIError{code: resp.StatusCode}
	}
	return r, nil
}

func retriable(resp *Response, err error) bool {
	if err != nil && err != errBadBucket {
		if resp != nil && resp.StatusCode < 500 {
			return false
		}
		return true
	}
	return false
}

// case: flag nojitter retryafter
func (c *Client) sendRetrying(ctx context.Context, req *http.Request) (*Response, error) {
	var resp *Response
	var err error
	for n := 0; n < 3; n++ {
		resp, err = c.send(ctx, req)
		if !retriable(resp, err) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond): // want `nojitter: this wait` `retryafter: retry loop retries 503`
		}
	}
	return resp, err
}

// Job is a remote job's state.
type Job struct{ Status int }

// case: clean
func (c *Client) pollJob(ctx context.Context, get func(context.Context) (*Job, error)) (*Job, error) {
	// A job's Status is the job's, not an HTTP status: a poll.
	for {
		j, err := get(ctx)
		if err != nil {
			return nil, err
		}
		if j.Status == 3 {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
