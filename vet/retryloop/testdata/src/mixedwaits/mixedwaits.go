// Package mixedwaits holds, written anew, request loops whose wait is the
// server's Retry-After on one path and the client's own schedule on the
// others: the client's part is judged as if the server's were not there.
package mixedwaits

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Config holds the client's retry settings.
type Config struct {
	MaxRetries int
	WaitTime   time.Duration // want WaitTime:"setting kind=1 bydefault=true caller=false"
}

// NewConfig returns the defaults.
func NewConfig() *Config { return &Config{MaxRetries: 3, WaitTime: 100 * time.Millisecond} }

type client struct {
	cfg *Config
	hc  *http.Client
}

func (c *client) pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// A 5xx waits the configured constant; a 429 waits the server's
// Retry-After when it is sent.
//
// A 503 goes round on the client's schedule while Retry-After is read only
// on a 429: the 503's own Retry-After goes unread, retryafter by the
// definition (first labelled without it, before the analyzer read where
// the header is read).
//
// case: flag nojitter retryafter
func (c *client) call(req *http.Request) (*http.Response, error) {
	for try := 1; ; try++ {
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		var wait time.Duration
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable:
			wait = c.cfg.WaitTime
		case http.StatusTooManyRequests:
			if ra := resp.Header.Get("Retry-After"); ra != "" {
				secs, err := strconv.Atoi(ra)
				if err != nil {
					return resp, err
				}
				wait = time.Duration(secs) * time.Second
			} else {
				wait = c.cfg.WaitTime
			}
		default:
			return resp, nil
		}
		if try >= c.cfg.MaxRetries {
			return resp, nil
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.pause(req.Context(), wait) // want `nojitter: pause in a retry loop has a constant or purely exponential duration by default` `retryafter: retry loop retries 503 without reading Retry-After, which it reads only on another status`
	}
}

// The same loop with its own wait spread by full jitter.
//
// A 503 goes round on the client's schedule while Retry-After is read only
// on a 429: the 503's own Retry-After goes unread, retryafter by the
// definition (first labelled without it, before the analyzer read where
// the header is read).
//
// case: flag retryafter
func (c *client) callSpread(req *http.Request) (*http.Response, error) {
	for try := 1; ; try++ {
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		var wait time.Duration
		switch resp.StatusCode {
		case http.StatusServiceUnavailable:
			wait = time.Duration(rand.Int64N(int64(c.cfg.WaitTime) << try))
		case http.StatusTooManyRequests:
			if ra := resp.Header.Get("Retry-After"); ra != "" {
				secs, _ := strconv.Atoi(ra)
				wait = time.Duration(secs) * time.Second
			} else {
				wait = time.Duration(rand.Int64N(int64(c.cfg.WaitTime) << try))
			}
		default:
			return resp, nil
		}
		if try >= c.cfg.MaxRetries {
			return resp, nil
		}
		resp.Body.Close()
		c.pause(req.Context(), wait) // want `retryafter: retry loop retries 503 without reading Retry-After, which it reads only on another status`
	}
}

func retryAfter(v string) time.Duration {
	secs, err := strconv.Atoi(v)
	if err != nil {
		return time.Second
	}
	return time.Duration(secs) * time.Second
}

// The server's wait read by a helper on a 429, a fixed two seconds on a
// 503.
//
// A 503 goes round on the client's schedule while Retry-After is read only
// on a 429: the 503's own Retry-After goes unread, retryafter by the
// definition (first labelled without it, before the analyzer read where
// the header is read).
//
// case: flag nojitter retryafter
func fetch(ctx context.Context, hc *http.Client, url string) (*http.Response, error) {
	for try := 0; try < 4; try++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		var wait time.Duration
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			wait = retryAfter(resp.Header.Get("Retry-After"))
		case http.StatusServiceUnavailable:
			wait = 2 * time.Second
		default:
			return resp, nil
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503 without reading Retry-After, which it reads only on another status`
		}
	}
	return nil, io.ErrUnexpectedEOF
}

// Only the server's wait: a 429 goes round after its Retry-After, every
// other answer returns.
//
// case: clean
func fetchPaced(ctx context.Context, hc *http.Client, url string) (*http.Response, error) {
	for try := 0; try < 4; try++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp, nil
		}
		var wait time.Duration
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			wait = retryAfter(ra)
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil, io.ErrUnexpectedEOF
}

// untilParsed reads Retry-After as an instant.
func untilParsed(h string) time.Time {
	secs, err := strconv.Atoi(h)
	if err != nil {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(secs) * time.Second)
}

// readTile waits until the instant the server named when it named one,
// and otherwise 1 s, 5 s, 25 s: a schedule of powers with no randomness.
//
// case: flag nojitter
func readTile(ctx context.Context, hc *http.Client, req *http.Request) ([]byte, error) {
	var retryAfter time.Time
	for j := range 5 {
		if j > 0 {
			pause := time.Duration(1<<(2*(j-1))) * time.Second
			if !retryAfter.IsZero() {
				pause = time.Until(retryAfter)
				retryAfter = time.Time{}
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(pause): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
			}
		}
		resp, err := hc.Do(req.WithContext(ctx))
		if err != nil {
			continue
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			retryAfter = untilParsed(resp.Header.Get("Retry-After"))
			resp.Body.Close()
			continue
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	return nil, context.DeadlineExceeded
}
