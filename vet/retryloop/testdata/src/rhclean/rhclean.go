// Package rhclean builds, written anew, go-retryablehttp clients that
// hear the server's wait: the library's defaults, and a backoff of the
// package's own that reads Retry-After before its own schedule.
package rhclean

import (
	"net/http"
	"strconv"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// backoff waits what Retry-After says, else the library's linear jitter.
func backoff(min, max time.Duration, n int, resp *http.Response) time.Duration {
	if resp != nil {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			return time.Duration(s) * time.Second
		}
	}
	return retryablehttp.LinearJitterBackoff(min, max, n, resp)
}

// Client sends through a retrying client.
type Client struct {
	rc    *retryablehttp.Client
	plain *retryablehttp.Client
}

// New builds both.
func New() *Client {
	rc := retryablehttp.NewClient()
	rc.Backoff = backoff
	return &Client{rc: rc, plain: retryablehttp.NewClient()}
}

// case: clean
func (c *Client) send(req *retryablehttp.Request) (*http.Response, error) {
	return c.rc.Do(req)
}

// case: clean
func (c *Client) sendPlain(req *retryablehttp.Request) (*http.Response, error) {
	return c.plain.Do(req)
}
