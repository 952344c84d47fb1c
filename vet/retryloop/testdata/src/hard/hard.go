// Package hard holds cases the analyzer gets wrong, kept so that its
// precision and recall are measured honestly rather than on cases chosen
// to pass. Each function's label is what a careful reviewer would report.
package hard

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

type waiter interface {
	Wait(ctx context.Context) error
}

// case: flag unclassified
func libraryWait(ctx context.Context, c *http.Client, req *http.Request, bo waiter) (*http.Response, error) {
	// Missed: the wait is a method of an interface the analyzer cannot see
	// into, so it does not know the loop waits.
	for i := 0; i < 5; i++ {
		resp, err := c.Do(req)
		if err == nil {
			return resp, nil
		}
		if err := bo.Wait(ctx); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("gave up")
}

type config struct{ Delay time.Duration }

var defaults = config{Delay: time.Second}

// case: flag nojitter deafwait
func configuredDelay(c *http.Client, req *http.Request) (*http.Response, error) {
	// The delay is a struct field; the package's only value for it is
	// constant, so it is constant by default.
	for i := 0; i < 3; i++ {
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusBadGateway {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(defaults.Delay) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default` `deafwait: time\.Sleep ignores req\.Context\(\)`
	}
	return nil, errors.New("gave up")
}

func shouldRetry(resp *http.Response, err error) bool { return true }

// case: flag unclassified retryafter deafwait
func classifierThatDoesNot(c *http.Client, req *http.Request) (*http.Response, error) {
	// shouldRetry is read, and it says "retry" on a success too; a
	// classifier's "true" on a success is taken to say only which way
	// round it is, and its name says that way: a verdict to retry, which
	// no success gets. Every failure goes round, so the loop is judged.
	for i := 0; i < 3; i++ { // want `unclassified: retry loop around Client.Do retries on every error and on every non-2xx status`
		resp, err := c.Do(req)
		if !shouldRetry(resp, err) {
			return resp, err
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second)))) // want `deafwait: time\.Sleep ignores req\.Context\(\)` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
	}
	return nil, errors.New("gave up")
}

// case: clean
func waitForServerInTest(url string) error {
	// A false positive: a test waiting for its own server to listen. It
	// retries every transport error on a fixed period, and it is fine.
	for i := 0; i < 50; i++ {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
	}
	return errors.New("server never came up")
}

// Every transport error and every 5xx go round: the status is read.
//
// case: flag retryafter deafwait
func sleepFirst(c *http.Client, req *http.Request) (*http.Response, error) {
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Second) << i))) // want `retryafter: retry loop retries 503 without reading Retry-After` `deafwait: time\.Sleep ignores req\.Context\(\)`
		}
		resp, err := c.Do(req)
		if err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
	}
	return nil, errors.New("gave up")
}
