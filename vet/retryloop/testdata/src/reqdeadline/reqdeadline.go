// Package reqdeadline holds, written anew, loops that send again a request
// made with a context whose deadline was set before the loop: once the
// deadline passes the next attempt fails at once, and where that failure
// leaves the loop, the deadline bounds it.
package reqdeadline

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
)

var errRefused = errors.New("refused")

// serverWait is the wait the server asked for.
func serverWait(resp *http.Response) time.Duration {
	secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return time.Duration(secs) * time.Second
}

// A catalogue lookup that waits out each 429 as told, within ten seconds
// set before the first attempt: a failed connection, the expired deadline
// included, ends it.
//
// case: clean
func lookup(hc *http.Client, u string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for {
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			time.Sleep(serverWait(resp))
			continue
		}
		return resp, nil
	}
}

// The same lookup, the deadline handed to each attempt's copy of the
// request.
//
// case: clean
func lookupEach(hc *http.Client, u string) (*http.Response, error) {
	base, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Minute))
	defer cancel()
	for {
		resp, err := hc.Do(base.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			time.Sleep(serverWait(resp))
			continue
		}
		return resp, nil
	}
}

// No deadline on the request: a server that answers 429 for ever keeps
// the loop for ever.
//
// case: flag unbounded
func lookupForever(hc *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for { // want `unbounded: retry loop has no bound`
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			time.Sleep(serverWait(resp))
			continue
		}
		return resp, nil
	}
}

// A deadline on the request, but a failed connection goes round too:
// past the deadline every attempt fails at once, and the loop never
// leaves.
//
// case: flag unbounded nojitter
func lookupPastDeadline(hc *http.Client, u string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for { // want `unbounded: retry loop has no bound`
		resp, err := hc.Do(req)
		if err != nil {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
			continue
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			time.Sleep(serverWait(resp))
			continue
		}
		return resp, nil
	}
}

// A deadline set afresh for each attempt bounds the attempt, not the loop.
//
// case: flag unbounded
func lookupPerAttempt(hc *http.Client, u string) (*http.Response, error) {
	for { // want `unbounded: retry loop has no bound`
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			cancel()
			return nil, err
		}
		resp, err := hc.Do(req)
		cancel()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			time.Sleep(serverWait(resp))
			continue
		}
		return resp, nil
	}
}
