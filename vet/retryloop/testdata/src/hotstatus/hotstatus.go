// Package hotstatus holds, written anew, loops that send a request again
// at once, with no wait at all: one that does so on a 429 or a 503 asks
// the server again while it is saying when to come back.
package hotstatus

import (
	"errors"
	"net/http"
)

var errGaveUp = errors.New("gave up")

// A scrobble sent again at once on a 429 or any 5xx, five times at most.
//
// case: flag retryafter
func scrobble(hc *http.Client, newReq func() (*http.Request, error)) (*http.Response, error) {
	for try := 0; try < 5; try++ {
		req, err := newReq()
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req) // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			resp.Body.Close()
			continue
		}
		return resp, nil
	}
	return nil, errGaveUp
}

// The same request sent again at once only when the connection failed.
//
// case: clean
func scrobbleConn(hc *http.Client, newReq func() (*http.Request, error)) (*http.Response, error) {
	var last error
	for try := 0; try < 5; try++ {
		req, err := newReq()
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			continue
		}
		return resp, nil
	}
	return nil, last
}

// Each mirror asked once, the next one on a 503: a failover, not a
// retry.
//
// case: clean
func mirrors(hc *http.Client, urls []string) (*http.Response, error) {
	for _, u := range urls {
		resp, err := hc.Get(u)
		if err != nil {
			continue
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			resp.Body.Close()
			continue
		}
		return resp, nil
	}
	return nil, errGaveUp
}
