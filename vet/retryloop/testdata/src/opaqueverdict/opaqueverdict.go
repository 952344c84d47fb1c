// Package opaqueverdict holds, written anew, retry middleware whose
// verdict on each attempt comes from a function it is handed: a
// classifier out of sight, named for the verdict it gives.
package opaqueverdict

import (
	"math/rand/v2"
	"net/http"
	"time"
)

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// RetryPredicate says whether an attempt's outcome is worth another try.
type RetryPredicate func(resp *http.Response, err error, attempt int) bool

// Policy is a retry policy a caller supplies.
type Policy interface {
	ShouldRetry(resp *http.Response, err error) bool
}

func doubling(attempt int) time.Duration {
	d := time.Duration(1<<uint(attempt)) * 100 * time.Millisecond
	return d + d/10
}

// retrying re-sends while shouldRetry says so, each wait a doubling with a
// fixed tenth added: every client that failed together comes back
// together.
//
// case: flag nojitter
func retrying(next http.RoundTripper, tries int, shouldRetry RetryPredicate) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		var resp *http.Response
		var err error
		for attempt := range tries {
			resp, err = next.RoundTrip(req)
			if !shouldRetry(resp, err, attempt) {
				return resp, err
			}
			select {
			case <-time.After(doubling(attempt)): // want `nojitter: this wait in a retry loop`
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return resp, err
	})
}

// retryingJittered is retrying's twin with a full-jitter wait.
//
// case: clean
func retryingJittered(next http.RoundTripper, tries int, shouldRetry RetryPredicate) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		var resp *http.Response
		var err error
		for attempt := range tries {
			resp, err = next.RoundTrip(req)
			if !shouldRetry(resp, err, attempt) {
				return resp, err
			}
			select {
			case <-time.After(rand.N(doubling(attempt))):
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return resp, err
	})
}

// withPolicy asks a Policy the caller supplies, the same way.
//
// case: flag nojitter
func withPolicy(hc *http.Client, req *http.Request, p Policy) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := hc.Do(req)
		if attempt == 4 || !p.ShouldRetry(resp, err) {
			return resp, err
		}
		select {
		case <-time.After(doubling(attempt)): // want `nojitter: this wait in a retry loop`
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

// untilDone polls until a predicate the caller supplies says the answer
// is final: a name that does not say which way round it is, so whether a
// success goes round is not known, and the fixed pause is a poll's.
//
// case: clean
func untilDone(hc *http.Client, req *http.Request, done func(*http.Response, error) bool) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := hc.Do(req)
		if attempt == 4 || done(resp, err) {
			return resp, err
		}
		select {
		case <-time.After(doubling(attempt)):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

// untilRetrieved is untilDone's twin whose predicate is named for what it
// found, not for a retry: whether a success goes round is not known.
//
// case: clean
func untilRetrieved(hc *http.Client, req *http.Request, retrieved func(*http.Response, error) bool) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := hc.Do(req)
		if attempt == 4 || retrieved(resp, err) {
			return resp, err
		}
		select {
		case <-time.After(doubling(attempt)):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}
