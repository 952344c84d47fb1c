// Package checkresp holds, written anew, an API client whose calls hand
// each answer to a status check of their own (another package's
// CheckResponse, or this package's) and return its error: every failed
// status comes back as that error, and an operation retried by
// cenkalti's backoff that returns it goes round on a 401 as on a 503.
package checkresp

import (
	"errors"
	"net/http"

	"example.com/apicheck"
	"github.com/cenkalti/backoff/v4"
)

// Client is an identity service's client.
type Client struct {
	hc   *http.Client
	base string
}

func (c *Client) do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if err := apicheck.CheckResponse(resp); err != nil {
		return resp, err
	}
	return resp, nil
}

// GetClient reads one client by its id: a failed status is its error.
func (c *Client) GetClient(id string) (*http.Response, error) { // want GetClient:`folds`
	req, err := http.NewRequest(http.MethodGet, c.base+"/clients/"+id, nil)
	if err != nil {
		return nil, err
	}
	return c.do(req)
}

// checkOwn is this package's own status check.
func checkOwn(r *http.Response) error {
	if r.StatusCode >= 300 {
		return errors.New(r.Status)
	}
	return nil
}

// Confirm sends a confirmation: a failed status is its error.
func (c *Client) Confirm(id string) (*http.Response, error) { // want Confirm:`folds`
	req, err := http.NewRequest(http.MethodPost, c.base+"/confirm/"+id, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	return resp, checkOwn(resp)
}

// rawGet hands back the answer, whatever its status: its error is the
// transport's alone.
func (c *Client) rawGet(id string) (*http.Response, error) {
	return c.hc.Get(c.base + "/clients/" + id)
}

var (
	errNotFound = errors.New("not found")
	errBusy     = errors.New("busy")
)

// The client read again on every error GetClient returns, a 401 or a
// 403 as much as a 503, and a 429 without its Retry-After.
//
// case: flag unclassified retryafter
func (c *Client) waitForClient(id string) error {
	op := func() error {
		resp, err := c.GetClient(id)
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusNotFound {
			return errNotFound
		}
		return nil
	}
	return backoff.Retry(op, backoff.WithMaxRetries(backoff.NewExponentialBackOff(), 5)) // want `unclassified: backoff.Retry retries 400, 401, 403, 404, 413, 422` `retryafter: backoff.Retry retries 429 and 503 without reading Retry-After`
}

// The same read, its errors made permanent: only a 409 (another
// writer) goes round.
//
// case: clean
func (c *Client) waitForClientClassified(id string) error {
	op := func() error {
		resp, err := c.GetClient(id)
		if err != nil {
			return backoff.Permanent(err)
		}
		if resp.StatusCode == http.StatusConflict {
			return errBusy
		}
		return nil
	}
	return backoff.Retry(op, backoff.WithMaxRetries(backoff.NewExponentialBackOff(), 5))
}

// A confirmation sent again on every error of this package's own check.
//
// case: flag unclassified retryafter
func (c *Client) confirm(id string) error {
	return backoff.Retry(func() error { // want `unclassified: backoff.Retry retries 400, 401, 403, 404, 413, 422` `retryafter: backoff.Retry retries 429 and 503 without reading Retry-After`
		_, err := c.Confirm(id)
		return err
	}, backoff.WithMaxRetries(backoff.NewExponentialBackOff(), 8))
}

// The raw read's error is the transport's: only the 404 it tests goes
// round with it, no 429 or 503.
//
// case: flag unclassified
func (c *Client) waitForRaw(id string) error {
	op := func() error {
		resp, err := c.rawGet(id)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return errNotFound
		}
		return nil
	}
	return backoff.Retry(op, backoff.WithMaxRetries(backoff.NewExponentialBackOff(), 5)) // want `unclassified: backoff.Retry retries 404,`
}
