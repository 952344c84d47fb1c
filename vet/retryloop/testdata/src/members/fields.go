package members

import (
	"math/rand"
	"net/http"
	"time"
)

// retryTransport retries the statuses its constructor lists: its
// membership test ranges over a field of its receiver, not a parameter.
type retryTransport struct {
	next     http.RoundTripper
	attempts int
	codes    []int
}

// newLoginTransport retries the login on an overloaded or throttled API.
func newLoginTransport(next http.RoundTripper) http.RoundTripper {
	return retryTransport{next: next, attempts: 5, codes: []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusGatewayTimeout}}
}

func (t retryTransport) retries(code int) bool {
	for _, c := range t.codes {
		if c == code {
			return true
		}
	}
	return false
}

// RoundTrip waits a random, growing time that hears the request's
// context, but never what a 429 or a 503 said.
//
// case: flag retryafter
func (t retryTransport) RoundTrip(req *http.Request) (*http.Response, error) { // want RoundTrip:"remote=1 waits=true deaf=false jitter=2 durparam=0 retryafter=false bydefault=false ownretry"
	var resp *http.Response
	var err error
	wait := 0
	for i := range t.attempts {
		if i > 0 {
			wait += 10 + rand.Intn(20)
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(time.Duration(wait) * time.Second): // want `retryafter: retry loop retries 429 and 503`
			}
		}
		resp, err = t.next.RoundTrip(req.Clone(req.Context()))
		if err != nil {
			continue
		}
		if !t.retries(resp.StatusCode) {
			return resp, nil
		}
	}
	return resp, err
}

// gatewayTransport is the same transport given only gateway failures to
// retry: no 429 or 503, so no Retry-After to read.
type gatewayTransport struct {
	next     http.RoundTripper
	attempts int
	codes    []int
}

func newGatewayTransport(next http.RoundTripper) http.RoundTripper {
	return &gatewayTransport{next: next, attempts: 3, codes: []int{http.StatusBadGateway, http.StatusGatewayTimeout}}
}

func (t *gatewayTransport) retries(resp *http.Response) bool {
	for _, c := range t.codes {
		if c == resp.StatusCode {
			return true
		}
	}
	return false
}

// RoundTrip retries 502 and 504 alone.
//
// case: clean
func (t *gatewayTransport) RoundTrip(req *http.Request) (*http.Response, error) { // want RoundTrip:"remote=1 waits=true deaf=false jitter=2 durparam=0 retryafter=false bydefault=false ownretry"
	var resp *http.Response
	var err error
	wait := 0
	for i := range t.attempts {
		if i > 0 {
			wait += 10 + rand.Intn(20)
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(time.Duration(wait) * time.Second):
			}
		}
		resp, err = t.next.RoundTrip(req.Clone(req.Context()))
		if err != nil {
			continue
		}
		if !t.retries(resp) {
			return resp, nil
		}
	}
	return resp, err
}

var _, _ = newLoginTransport, newGatewayTransport
