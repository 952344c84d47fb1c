// Package gotos holds, written anew, retry loops written with a label and a
// goto back to it, and look-alikes.
package gotos

import (
	"errors"
	"math/rand"
	"net/http"
	"time"
)

// fetch goes back to the label on a 429 while attempts remain, after a
// wait made of constants and the counter, Retry-After unread.
//
// case: flag nojitter retryafter
func fetch(url string, attempts int) (*http.Response, error) {
retry:
	resp, err := http.Get(url)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests && attempts > 0 {
		resp.Body.Close()
		time.Sleep(time.Second / time.Duration(attempts)) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429`
		attempts--
		goto retry
	}
	return resp, err
}

// ping goes back on every transport error, with nothing to stop it.
//
// case: flag unbounded nojitter
func ping(url string) error {
again: // want `unbounded: retry loop has no bound`
	resp, err := http.Get(url)
	if err != nil {
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop`
		goto again
	}
	return resp.Body.Close()
}

// get sends once more after refreshing its token on a 401, and only then:
// a re-sign, not a retry.
//
// case: clean
func get(hc *http.Client, url string, refresh func() string) (*http.Response, error) {
	token := ""
	refreshed := false
send:
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && !refreshed {
		resp.Body.Close()
		token, refreshed = refresh(), true
		goto send
	}
	return resp, err
}

// put goes back on a 503 at most three times, each wait drawn at random.
//
// case: clean
func put(hc *http.Client, req *http.Request) (*http.Response, error) {
	tries := 0
again:
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "" {
		return resp, nil
	}
	if tries++; tries == 3 {
		return resp, errors.New("unavailable")
	}
	resp.Body.Close()
	t := time.NewTimer(time.Duration(rand.Int63n(int64(time.Second) << tries)))
	select {
	case <-t.C:
		goto again
	case <-req.Context().Done():
		t.Stop()
		return nil, req.Context().Err()
	}
}

// upload, for a PUT, goes back on a 503 while attempts remain, the label
// and the goto inside the case clause, after a constant wait with
// Retry-After unread.
//
// case: flag nojitter retryafter
func upload(hc *http.Client, req *http.Request, attempts int) (*http.Response, error) {
	switch req.Method {
	case http.MethodPut:
	again:
		resp, err := hc.Do(req)
		if err == nil && resp.StatusCode == http.StatusServiceUnavailable && attempts > 0 {
			resp.Body.Close()
			attempts--
			select {
			case <-time.After(time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503`
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
			goto again
		}
		return resp, err
	}
	return hc.Do(req)
}
