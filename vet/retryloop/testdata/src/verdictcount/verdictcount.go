// Package verdictcount holds, written anew, retry loops whose count is
// kept by a helper: the loop hands it the attempt number and stops when
// it answers false, so the helper's comparison bounds the loop.
package verdictcount

import (
	"math/rand/v2"
	"net/http"
	"time"
)

type client struct {
	http       *http.Client
	maxRetries int
}

// backoff answers false once the attempts are spent, and otherwise waits
// a random time before the next one.
func (c *client) backoff(attempt int) bool {
	if attempt >= c.maxRetries {
		return false
	}
	time.Sleep(rand.N(time.Second << attempt))
	return true
}

// pause waits and always answers true: it counts nothing.
func (c *client) pause(attempt int) bool {
	time.Sleep(rand.N(time.Second << min(attempt, 6)))
	return true
}

// The helper's count bounds the loop; the 503s go round without the
// server's Retry-After.
//
// case: flag retryafter
func (c *client) get(url string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.http.Get(url)
		if err != nil {
			if ok := c.backoff(attempt); !ok { // want `retryafter: retry loop retries 503 without reading Retry-After`
				return nil, err
			}
			continue
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			return resp, nil
		}
		resp.Body.Close()
		if ok := c.backoff(attempt); !ok {
			return nil, err
		}
	}
}

// The same with a helper that never says stop.
//
// case: flag retryafter unbounded
func (c *client) getForever(url string) (*http.Response, error) {
	for attempt := 0; ; attempt++ { // want `unbounded: retry loop has no bound`
		resp, err := c.http.Get(url)
		if err != nil {
			if ok := c.pause(attempt); !ok { // want `retryafter: retry loop retries 503 without reading Retry-After`
				return nil, err
			}
			continue
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			return resp, nil
		}
		resp.Body.Close()
		if ok := c.pause(attempt); !ok {
			return nil, err
		}
	}
}
