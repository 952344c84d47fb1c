// Package serverwaits holds, written anew, loops that wait what the
// server said in a header other than Retry-After, and OAuth's device
// authorization poll, which goes round on the server's 400 "not yet".
package serverwaits

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// A 429 re-sent after the instant the server names in X-RateLimit-Reset:
// the server's wait, read (on a sleep deaf to the request's context).
//
// case: flag deafwait
func sendRateLimited(hc *http.Client, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		resp, err = hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			return resp, err
		}
		resp.Body.Close()
		reset, perr := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
		if perr != nil {
			return resp, nil
		}
		time.Sleep(time.Until(time.Unix(reset, 0))) // want `deafwait: time.Sleep ignores req.Context`
	}
	return resp, err
}

// The same loop reading no header: a constant second after a 429.
//
// case: flag nojitter deafwait retryafter
func sendRateLimitedBlind(hc *http.Client, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		resp, err = hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			return resp, err
		}
		resp.Body.Close()
		time.Sleep(time.Second) // want `deafwait: time.Sleep ignores req.Context` `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 without reading Retry-After`
	}
	return resp, err
}

// tokenError is an OAuth error answer.
type tokenError struct {
	Error string `json:"error"`
}

// The device authorization poll: a 400 whose error is
// "authorization_pending" or "slow_down" is the server's "not yet", and
// the wait is the interval it gave.
//
// case: clean
func pollDeviceToken(hc *http.Client, tokenURL string, form url.Values, interval time.Duration, expiry time.Time) (*http.Response, error) {
	for time.Now().Before(expiry) {
		resp, err := hc.PostForm(tokenURL, form)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		var te tokenError
		derr := json.NewDecoder(resp.Body).Decode(&te)
		resp.Body.Close()
		if derr != nil || resp.StatusCode != http.StatusBadRequest {
			return nil, errors.New("token endpoint: " + resp.Status)
		}
		switch te.Error {
		case "authorization_pending":
		case "slow_down":
			interval += 5 * time.Second
		default:
			return nil, errors.New("device authorization: " + te.Error)
		}
		time.Sleep(interval)
	}
	return nil, errors.New("device code expired")
}

// A token request re-sent on every 400 whatever the error says: a 400
// will not change.
//
// case: flag unclassified nojitter
func requestToken(hc *http.Client, tokenURL string, form url.Values) (*http.Response, error) {
	for attempt := 0; attempt < 5; attempt++ { // want `unclassified: retry loop around Client.PostForm retries on 400`
		resp, err := hc.PostForm(tokenURL, form)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusBadRequest {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop`
	}
	return nil, errors.New("no token")
}

// The device poll with no expiry: it goes round for as long as the user
// has not answered.
//
// case: flag unbounded
func pollDeviceTokenForever(hc *http.Client, tokenURL string, form url.Values, interval time.Duration) (*http.Response, error) {
	for { // want `unbounded: retry loop has no bound`
		resp, err := hc.PostForm(tokenURL, form)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		var te tokenError
		derr := json.NewDecoder(resp.Body).Decode(&te)
		resp.Body.Close()
		if derr != nil || resp.StatusCode != http.StatusBadRequest || te.Error != "authorization_pending" {
			return nil, errors.New("token endpoint: " + resp.Status)
		}
		time.Sleep(interval)
	}
}
