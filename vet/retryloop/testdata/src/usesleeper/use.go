// Package usesleeper calls wait helpers from another package.
package usesleeper

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sleeper"
)

// It reads the status and retries only 5xx: every transport error going
// round with them is no storm.
//
// case: flag nojitter deafwait
func crossPackageDoubling(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
	for i := 0; i < 3; i++ {
		resp, err := c.Get(url)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			sleeper.Doubling(i) // want `deafwait: Doubling waits with time\.Sleep and cannot hear ctx` `nojitter: Doubling in a retry loop has a constant or purely exponential duration`
			continue
		}
		if resp.StatusCode >= 500 && resp.StatusCode != 503 {
			resp.Body.Close()
			sleeper.Doubling(i) // want `deafwait: Doubling waits with time\.Sleep and cannot hear ctx` `nojitter: Doubling in a retry loop has a constant or purely exponential duration`
			continue
		}
		return resp, nil
	}
	return nil, errors.New("gave up")
}

// case: flag unclassified nojitter
func crossPackageFetchAndFor(url string) (*http.Response, error) {
	for i := 0; i < 3; i++ { // want `unclassified: retry loop around sleeper\.Fetch retries on every error`
		resp, err := sleeper.Fetch(http.DefaultClient, url)
		if err == nil {
			return resp, nil
		}
		sleeper.For(3 * time.Second) // want `nojitter: For in a retry loop has a constant or purely exponential duration`
	}
	return nil, errors.New("gave up")
}

// case: clean
func crossPackageJittered(url string) (*http.Response, error) {
	for i := 0; i < 3; i++ {
		resp, err := sleeper.Fetch(http.DefaultClient, url)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 429 {
			return resp, nil
		}
		if d := sleeper.RetryAfter(resp); d > 0 {
			sleeper.For(d)
			continue
		}
		sleeper.Jittered(i)
	}
	return nil, errors.New("gave up")
}
