// Package checks holds, written anew, retry loops that turn the response
// into an error through a helper of their own (err = checkResponse(resp)).
package checks

import (
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"time"
)

func checkResponse(resp *http.Response) error {
	if resp.StatusCode >= 400 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// get goes round on every transport error and every status from 400 up,
// a constant second apart.
//
// case: flag unclassified nojitter retryafter
func get(hc *http.Client, url string) (*http.Response, error) {
	var err error
	for try := 0; try < 3; try++ { // want `unclassified: retry loop around Client.Get retries on every error and on 400, 401, 403, 404, 413, 422`
		var resp *http.Response
		resp, err = hc.Get(url)
		if err == nil {
			if err = checkResponse(resp); err == nil {
				return resp, nil
			}
			resp.Body.Close()
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
	return nil, err
}

// StatusError is a status the server answered with.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("status %d", e.Code) }

func transient(resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable:
		return &StatusError{Code: resp.StatusCode}
	}
	return nil
}

// post goes round on 429, 502 and 503 only, a random share of a doubling
// wait apart, without reading Retry-After.
//
// case: flag retryafter
func post(hc *http.Client, url string) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			return nil, err
		}
		if err := transient(resp); err == nil || try == 4 {
			return resp, err
		}
		resp.Body.Close()
		time.Sleep(time.Duration(rand.Int63n(int64(100*time.Millisecond) << try))) // want `retryafter: retry loop retries 429 and 503`
	}
}

func serverFault(resp *http.Response) error {
	if resp.StatusCode == http.StatusInternalServerError || resp.StatusCode == http.StatusBadGateway {
		return errors.New("server fault")
	}
	return nil
}

// put goes round on a transport error, 500 or 502, with full jitter, at
// most four times.
//
// case: clean
func put(hc *http.Client, url string) (*http.Response, error) {
	var err error
	for try := 0; try < 4; try++ {
		var resp *http.Response
		if resp, err = hc.Post(url, "application/json", nil); err == nil {
			if err = serverFault(resp); err == nil {
				return resp, nil
			}
			resp.Body.Close()
		}
		time.Sleep(time.Duration(rand.Int63n(int64(100*time.Millisecond) << try)))
	}
	return nil, err
}
