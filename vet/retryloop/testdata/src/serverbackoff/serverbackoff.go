// Package serverbackoff holds a client whose request keeps its own
// backoff: the server's Retry-After when it sent one, else a schedule.
package serverbackoff

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

const base = 2 * time.Second

type request struct {
	*http.Request
	attempts int
	backoff  time.Duration
}

// backOff is the Retry-After the last answer gave, or else a doubling
// of a constant: the same for every client that failed together.
func (r *request) backOff() time.Duration {
	if r.backoff <= 0 {
		r.backoff = base << r.attempts
	}
	return r.backoff
}

// spread is backOff's twin that draws the schedule at random.
func (r *request) spread() time.Duration {
	if r.backoff <= 0 {
		return time.Duration(rand.Int64N(int64(base << r.attempts)))
	}
	return r.backoff
}

// note keeps the server's wait from a failed answer, if it named one.
func (r *request) note(resp *http.Response) {
	r.backoff = 0
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil {
			r.backoff = time.Duration(s) * time.Second
		}
	}
}

// do retries a transport error, a 5xx or a 429 five times, waiting
// backOff: exponential from a constant whenever the server names no wait.
//
// case: flag nojitter
func do(ctx context.Context, hc *http.Client, r *request) (*http.Response, error) {
	for {
		resp, err := hc.Do(r.Request)
		if err == nil && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return resp, nil
		}
		r.attempts++
		r.backoff = 0
		if resp != nil {
			r.note(resp)
			resp.Body.Close()
		}
		if r.attempts >= 5 {
			return nil, errors.New("gave up")
		}
		t := time.NewTimer(r.backOff()) // want `nojitter: this wait in a retry loop`
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// doSpread is do's twin waiting spread: drawn at random when the server
// names no wait.
//
// case: clean
func doSpread(ctx context.Context, hc *http.Client, r *request) (*http.Response, error) {
	for {
		resp, err := hc.Do(r.Request)
		if err == nil && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return resp, nil
		}
		r.attempts++
		r.backoff = 0
		if resp != nil {
			r.note(resp)
			resp.Body.Close()
		}
		if r.attempts >= 5 {
			return nil, errors.New("gave up")
		}
		t := time.NewTimer(r.spread())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
