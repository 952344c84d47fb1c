// Package pesters holds, written anew, clients of sethgrid/pester, which
// re-sends a request on a transport error or any 5xx (a 429 too when
// told) after its Backoff, a second by default, never reading
// Retry-After.
package pesters

import (
	"bytes"
	"net/http"

	"github.com/sethgrid/pester"
)

// putResults sends a worker's results with the defaults: three attempts
// a second apart.
//
// case: flag nojitter retryafter
func putResults(url string, body []byte) error {
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	client := pester.NewExtendedClient(&http.Client{}) // want `nojitter: pester.NewExtendedClient re-sends a failed request on a schedule with no jitter` `retryafter: pester.NewExtendedClient re-sends 503 without reading Retry-After`
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// fetchDoubling doubles the wait, told to re-send 429 too.
//
// case: flag nojitter retryafter
func fetchDoubling(url string) (*http.Response, error) {
	c := pester.New() // want `nojitter: pester.New re-sends` `retryafter: pester.New re-sends 429 and 503 without reading Retry-After`
	c.Backoff = pester.ExponentialBackoff
	c.SetRetryOnHTTP429(true)
	return c.Get(url)
}

// fetchJittered takes the jittered doubling: the server's wait is still
// unread.
//
// case: flag retryafter
func fetchJittered(url string) (*http.Response, error) {
	c := pester.New() // want `retryafter: pester.New re-sends 503 without reading Retry-After`
	c.Backoff = pester.ExponentialJitterBackoff
	c.MaxRetries = 5
	return c.Get(url)
}

// fetchOnce asks for one attempt: nothing is re-sent.
//
// case: clean
func fetchOnce(url string) (*http.Response, error) {
	c := pester.New()
	c.MaxRetries = 1
	return c.Get(url)
}

// fetchOwn waits what its caller says, its jitter not in sight here;
// the server's wait is unread whatever it is.
//
// case: flag retryafter
func fetchOwn(url string, wait pester.BackoffStrategy) (*http.Response, error) {
	c := pester.New() // want `retryafter: pester.New re-sends 503 without reading Retry-After`
	c.Backoff = wait
	return c.Get(url)
}

// getDefault goes through the package's DefaultClient.
//
// case: flag nojitter retryafter
func getDefault(url string) (*http.Response, error) {
	return pester.Get(url) // want `nojitter: pester.Get re-sends` `retryafter: pester.Get re-sends 503`
}
