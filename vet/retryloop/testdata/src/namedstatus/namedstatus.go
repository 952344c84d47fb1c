// Package namedstatus holds, written anew, a certificate client whose
// request helper names its results and returns them bare, the status
// among them, and the loops that wait on it.
package namedstatus

import (
	"context"
	"io"
	"math/rand"
	"net/http"
	"time"
)

// Client asks a certificate service.
type Client struct {
	hc *http.Client
}

// request sends one request and hands back the answer's status and body.
func (c *Client) request(method, url string) (statusCode int, body []byte, err error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	statusCode = res.StatusCode
	body, err = io.ReadAll(res.Body)
	return
}

// waitForCertificate asks every two seconds until the answer is a 200,
// whatever else it is — a 404 for a certificate that will never exist, a
// 429 that said when to come back — until the timeout passes.
//
// case: flag unclassified nojitter retryafter
func (c *Client) waitForCertificate(url string, timeout time.Duration) ([]byte, error) {
	start := time.Now()
	for { // want `unclassified: retry loop around Client.request retries on every non-2xx status`
		code, body, err := c.request("GET", url)
		if err != nil {
			return nil, err
		}
		if code == http.StatusOK {
			return body, nil
		}
		if time.Since(start) > timeout {
			return nil, context.DeadlineExceeded
		}
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
}

// size hands back the body's length, named and returned bare like a
// status but none.
func (c *Client) size(url string) (n int, err error) {
	_, body, err := c.request("GET", url)
	n = len(body)
	return
}

// pollSize asks for the size until it is not zero, every two seconds
// with a random part: a poll of an answer, not a status.
//
// case: clean
func (c *Client) pollSize(ctx context.Context, url string) (int, error) {
	for {
		n, err := c.size(url)
		if err != nil || n > 0 {
			return n, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second + time.Duration(rand.Int63n(int64(time.Second)))):
		}
	}
}
