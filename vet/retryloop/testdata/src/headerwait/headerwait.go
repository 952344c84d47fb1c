// Package headerwait holds, written anew, a rate-limited client that
// waits what the server's Retry-After says, parsed with
// time.ParseDuration, and a second more for rounding: the server's wait,
// not a schedule of the client's.
package headerwait

import (
	"io"
	"net/http"
	"time"
)

type client struct {
	hc      *http.Client
	rlSleep bool
}

// A 429 is asked again, by recursion, after the server's wait; nothing
// counts the tries.
//
// case: flag unbounded
func (c *client) get(u string) ([]byte, error) {
	hr, err := c.hc.Get(u)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	hb, err := io.ReadAll(hr.Body)
	if err != nil {
		return nil, err
	}
	if hr.StatusCode == http.StatusTooManyRequests && c.rlSleep {
		header := hr.Header.Get("Retry-After")
		delay, err := time.ParseDuration(header + "s")
		if err != nil {
			return nil, err
		}
		delay += time.Second
		time.Sleep(delay)
		return c.get(u) // want `unbounded: retry by recursion has no bound`
	}
	return hb, nil
}
