// Package paramjitter holds, written anew, retry helpers whose wait is a
// parameter the caller hands in, reassigned in the helper before it
// waits: with a random term, the wait is jittered whatever the caller
// passed.
package paramjitter

import (
	"errors"
	"math/rand"
	"net/http"
	"syscall"
	"time"
)

// getWith retries a refused connection, each wait its base plus up to
// half again at random, the base doubling.
//
// case: clean
func getWith(hc *http.Client, url string, attempts int, sleep time.Duration) (*http.Response, error) {
	for {
		resp, err := hc.Get(url)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
			return resp, err
		}
		if attempts--; attempts <= 0 {
			return nil, err
		}
		jitter := time.Duration(rand.Int63n(int64(sleep)))
		sleep += jitter / 2
		time.Sleep(sleep)
		sleep *= 2
	}
}

// getDoubling is getWith with no random term: the base only doubles.
//
// case: flag nojitter
func getDoubling(hc *http.Client, url string, attempts int, sleep time.Duration) (*http.Response, error) {
	for {
		resp, err := hc.Get(url)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
			return resp, err
		}
		if attempts--; attempts <= 0 {
			return nil, err
		}
		time.Sleep(sleep) // want `nojitter: this wait in a retry loop`
		sleep *= 2
	}
}

// fetch asks with a second's base.
func fetch(hc *http.Client, url string) (*http.Response, error) {
	if resp, err := getWith(hc, url, 3, time.Second); err == nil {
		return resp, nil
	}
	return getDoubling(hc, url, 3, time.Second)
}
