// Package rhflag builds, written anew, a go-retryablehttp client whose
// defaults retry 429 and 503 on a linear jittered schedule that never
// reads Retry-After.
package rhflag

import (
	"context"
	"net/http"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// Config is what the user may change.
type Config struct {
	CheckRetry retryablehttp.CheckRetry
	Backoff    retryablehttp.Backoff
	RetryMax   int
}

// DefaultConfig is the package's default.
func DefaultConfig() Config {
	return Config{CheckRetry: retryPolicy, Backoff: retryablehttp.LinearJitterBackoff, RetryMax: 2}
}

// WithBackoff is the user's choice.
func WithBackoff(c *Config, b retryablehttp.Backoff) {
	if b == nil {
		b = DefaultConfig().Backoff
	}
	c.Backoff = b
}

// retryPolicy retries what the library does, and a 412 too.
func retryPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	retry, rerr := retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	if retry || rerr != nil {
		return retry, rerr
	}
	return resp != nil && resp.StatusCode == http.StatusPreconditionFailed, nil
}

// Client sends through the retrying client.
type Client struct {
	rc *retryablehttp.Client
}

// New builds the client from cfg.
func New(cfg Config) *Client {
	return &Client{rc: &retryablehttp.Client{HTTPClient: http.DefaultClient, CheckRetry: cfg.CheckRetry, Backoff: cfg.Backoff, RetryMax: cfg.RetryMax}}
}

// The library retries a 429 or 503 after LinearJitterBackoff's wait,
// whatever Retry-After says.
//
// case: flag retryafter
func (c *Client) send(req *retryablehttp.Request) (*http.Response, error) {
	return c.rc.Do(req) // want `retryafter: go-retryablehttp client retries 429 and 503 with a Backoff that never reads Retry-After`
}
