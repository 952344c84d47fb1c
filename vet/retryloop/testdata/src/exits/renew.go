package exits

import (
	"math/rand"
	"net/http"
	"time"

	"appcfg"
)

// connectRegistry waits a section's setting between tries: the user's one
// value, the same on every instance.
//
// case: flag nojitter unclassified retryafter
func connectRegistry(cfg *appcfg.Config) {
	for try := 0; try < 10; try++ { // want `unclassified: retry loop around register retries on every error`
		if err := register(cfg.Registry.Addr); err == nil {
			return
		}
		time.Sleep(cfg.Registry.Retry) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
}

// renewToken renews a lease on a timer it ranges over: a timer's channel
// never closes, so a renewal that keeps failing goes round every second
// forever.
//
// case: flag nojitter unbounded
func renewToken(c *http.Client, url string, ttl time.Duration) {
	timer := time.NewTimer(ttl / 2)
	for range timer.C { // want `unbounded: retry loop has no bound`
		resp, err := c.Post(url, "text/plain", nil)
		if err != nil {
			timer.Reset(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		resp.Body.Close()
		timer.Reset(ttl / 2)
	}
}

// renewTokenSpread gives up after a few failures in a row, each waiting a
// random part of a growing second.
//
// case: clean
func renewTokenSpread(c *http.Client, url string, ttl time.Duration) {
	timer := time.NewTimer(ttl / 2)
	failures := 0
	for range timer.C {
		resp, err := c.Post(url, "text/plain", nil)
		if err != nil {
			failures++
			if failures == 5 {
				return
			}
			timer.Reset(time.Duration(rand.Int63n(int64(time.Second << failures))))
			continue
		}
		failures = 0
		resp.Body.Close()
		timer.Reset(ttl / 2)
	}
}
