// Package aliases holds, written anew, retry loops that test the status
// under another name (code := resp.StatusCode): it is the status still.
package aliases

import (
	"math/rand"
	"net/http"
	"time"
)

type transport struct {
	next  http.RoundTripper
	limit int
	base  time.Duration
}

// RoundTrip re-sends on 429 and 503, and on other 5xx for GET, tested
// through code, after a jittered wait, never reading Retry-After.
//
// case: flag retryafter
func (t *transport) RoundTrip(req *http.Request) (resp *http.Response, err error) { // want RoundTrip:`remote=1 waits=true deaf=false jitter=2`
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(rand.Int63n(int64(t.base << attempt)))): // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		resp, err = t.next.RoundTrip(req)
		if err != nil || attempt == t.limit {
			return resp, err
		}
		code := resp.StatusCode
		switch {
		case code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests:
			resp.Body.Close()
			continue
		case code >= 500 && req.Method == http.MethodGet:
			resp.Body.Close()
			continue
		}
		return resp, nil
	}
}

// fetch goes round on a 502 only, after a jittered wait: nothing to
// report.
//
// case: clean
func fetch(c *http.Client, req *http.Request) (*http.Response, error) {
	for i := range 4 {
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		status := resp.StatusCode
		if status != http.StatusBadGateway {
			return resp, nil
		}
		resp.Body.Close()
		select {
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second << i)))):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return nil, http.ErrHandlerTimeout
}
