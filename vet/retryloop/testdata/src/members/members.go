// Package members holds, written anew, retry loops that test a status set
// through a small helper of their own (hasStatus(resp, retryable...)).
package members

import (
	"errors"
	"math"
	"math/rand"
	"net/http"
	"strconv"
	"time"
)

// Doer sends a request: an http.Client, or a decorated one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

func hasStatus(resp *http.Response, codes ...int) bool {
	if resp == nil {
		return false
	}
	for _, c := range codes {
		if c == resp.StatusCode {
			return true
		}
	}
	return false
}

func oneOf(code int, codes []int) bool {
	for _, c := range codes {
		if code == c {
			return true
		}
	}
	return false
}

// fetchToken goes round on every transport error and on a list of
// statuses grown for a metadata endpoint: 404 among them.
//
// case: flag unclassified nojitter retryafter
func fetchToken(d Doer, req *http.Request, attempts int) (resp *http.Response, err error) {
	retryable := []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable}
	retryable = append(retryable, http.StatusNotFound, http.StatusGone)
	var wait time.Duration
	for try := 0; try < attempts; try++ { // want `unclassified: retry loop around Doer.Do retries on every error and on 404`
		resp, err = d.Do(req)
		if err == nil && !hasStatus(resp, retryable...) {
			return resp, nil
		}
		if resp != nil {
			resp.Body.Close()
		}
		wait += time.Duration(math.Pow(2, float64(try))) * time.Second
		select {
		case <-time.After(wait): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return resp, err
}

// send goes round only on 429 and 503, for as long as the server asks,
// with full jitter, at most four times.
//
// case: clean
func send(hc *http.Client, req *http.Request) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if try == 3 || !oneOf(resp.StatusCode, []int{429, 503}) {
			return resp, nil
		}
		resp.Body.Close()
		wait := time.Duration(rand.Int63n(int64(time.Second) << try))
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			wait = time.Duration(s) * time.Second
		}
		select {
		case <-time.After(wait):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

// accepted lists the answers a caller takes; any other goes round.
//
// case: flag unclassified retryafter
func post(hc *http.Client, req *http.Request) error {
	for try := 0; try < 3; try++ { // want `unclassified: retry loop around Client.Do`
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if hasStatus(resp, http.StatusOK, http.StatusCreated) {
			return nil
		}
		select {
		case <-time.After(time.Duration(rand.Int63n(int64(time.Second) << try))): // want `retryafter: retry loop retries 429 and 503`
		case <-req.Context().Done():
			return req.Context().Err()
		}
	}
	return errors.New("not accepted")
}
