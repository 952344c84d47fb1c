// Package sleeper holds wait helpers another package's loops call: their
// facts cross the package boundary.
package sleeper

import (
	"math/rand/v2"
	"net/http"
	"time"
)

// Doubling waits a purely exponential time.
func Doubling(attempt int) { // want Doubling:`remote=0 waits=true deaf=true jitter=1 durparam=0`
	time.Sleep(100 * time.Millisecond << attempt)
}

// For waits d: the caller's argument decides the jitter.
func For(d time.Duration) { // want For:`remote=0 waits=true deaf=true jitter=0 durparam=1`
	time.Sleep(d)
}

// Jittered waits a random part of an exponential time.
func Jittered(attempt int) { // want Jittered:`remote=0 waits=true deaf=true jitter=2`
	time.Sleep(time.Duration(rand.Int64N(int64(100*time.Millisecond) << attempt)))
}

// Fetch calls an HTTP endpoint.
func Fetch(c *http.Client, url string) (*http.Response, error) { // want Fetch:`remote=1 waits=false`
	return c.Get(url)
}

// RetryAfter reads the Retry-After header.
func RetryAfter(resp *http.Response) time.Duration { // want RetryAfter:`retryafter=true`
	if resp.Header.Get("Retry-After") != "" {
		return 5 * time.Second
	}
	return 0
}
