// Package pester stands in for github.com/sethgrid/pester: a Client that
// re-sends a request on a transport error or a 5xx (a 429 too when told),
// up to MaxRetries attempts, waiting Backoff(i) in a select on the
// request's context; it never reads Retry-After.
package pester

import (
	"math/rand"
	"net/http"
	"time"
)

// BackoffStrategy is the wait before attempt i+1.
type BackoffStrategy func(retry int) time.Duration

// Client re-sends failed requests.
type Client struct {
	hc             *http.Client
	MaxRetries     int
	Backoff        BackoffStrategy
	RetryOnHTTP429 bool
}

// DefaultClient is what the package's functions send through.
var DefaultClient = &Client{MaxRetries: 3, Backoff: DefaultBackoff}

// New makes a Client with the defaults: three attempts a second apart.
func New() *Client {
	return &Client{MaxRetries: DefaultClient.MaxRetries, Backoff: DefaultClient.Backoff}
}

// NewExtendedClient makes a Client around hc with the defaults.
func NewExtendedClient(hc *http.Client) *Client {
	c := New()
	c.hc = hc
	return c
}

// DefaultBackoff is always a second.
func DefaultBackoff(_ int) time.Duration { return time.Second }

// ExponentialBackoff doubles.
func ExponentialBackoff(i int) time.Duration { return time.Duration(1<<uint(i)) * time.Second }

// ExponentialJitterBackoff doubles, give or take a third.
func ExponentialJitterBackoff(i int) time.Duration { return jitter(1 << uint(i)) }

// LinearBackoff grows by a second.
func LinearBackoff(i int) time.Duration { return time.Duration(i) * time.Second }

// LinearJitterBackoff grows by a second, give or take a third.
func LinearJitterBackoff(i int) time.Duration { return jitter(i) }

func jitter(i int) time.Duration {
	ms := i * 1000
	return time.Duration(ms+rand.Intn(ms*2/3+1)-ms/3) * time.Millisecond
}

// SetRetryOnHTTP429 makes a 429 go round too.
func (c *Client) SetRetryOnHTTP429(flag bool) { c.RetryOnHTTP429 = flag }

// Do sends req, again after a failure, up to MaxRetries attempts.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	hc := c.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	var resp *http.Response
	var err error
	for i := 1; i <= max(c.MaxRetries, 1); i++ {
		resp, err = hc.Do(req)
		if err == nil && resp.StatusCode < 500 && (resp.StatusCode != http.StatusTooManyRequests || !c.RetryOnHTTP429) {
			return resp, nil
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(c.Backoff(i)):
		}
	}
	return resp, err
}

// Get sends a GET through DefaultClient.
func Get(url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return DefaultClient.Do(req)
}

// Get sends a GET through c.
func (c *Client) Get(url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}
