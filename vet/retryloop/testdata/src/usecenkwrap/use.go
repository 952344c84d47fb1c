// Package usecenkwrap holds, written anew, callers of another package's
// generic retry helpers around cenkalti/backoff: the work they hand a
// helper that passes it on is judged as the library's own operations are.
package usecenkwrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"cenkwrap"

	"github.com/cenkalti/backoff/v5"
)

var errServer = errors.New("server error")

// An asset download whose every non-200 answer goes round: a 404 or a
// 401 is sent again, a 503 after the helper's own wait.
//
// case: flag unclassified nojitter retryafter
func artifact(ctx context.Context, hc *http.Client, url string, o cenkwrap.Options) ([]byte, error) {
	return cenkwrap.Do(ctx, func() ([]byte, error) { // want `unclassified: cenkwrap.Do retries` `nojitter: cenkwrap.Do waits` `retryafter: cenkwrap.Do retries 429 and 503 without reading Retry-After`
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode >= http.StatusInternalServerError {
			return nil, errServer
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("unexpected status %d", resp.StatusCode)
		}
		return io.ReadAll(resp.Body)
	}, o)
}

// The same download marking the answers that will not change Permanent
// and handing the server's wait to the library: only the helper's
// schedule is left.
//
// case: flag nojitter
func artifactClassified(ctx context.Context, hc *http.Client, url string, o cenkwrap.Options) ([]byte, error) {
	return cenkwrap.Do(ctx, func() ([]byte, error) { // want `nojitter: cenkwrap.Do waits`
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= http.StatusInternalServerError {
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
				return nil, backoff.RetryAfter(s)
			}
			return nil, errServer
		}
		if resp.StatusCode != http.StatusOK {
			return nil, backoff.Permanent(fmt.Errorf("unexpected status %d", resp.StatusCode))
		}
		return io.ReadAll(resp.Body)
	}, o)
}

// A count read through the jittered helper, every non-200 answer going
// round: the waits are spread, the answers still unclassified.
//
// case: flag unclassified retryafter
func count(ctx context.Context, hc *http.Client, url string) (int, error) {
	return cenkwrap.Spread(ctx, func() (int, error) { // want `unclassified: cenkwrap.Spread retries` `retryafter: cenkwrap.Spread retries 429 and 503 without reading Retry-After`
		resp, err := hc.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("unexpected status %d", resp.StatusCode)
		}
		return strconv.Atoi(resp.Header.Get("X-Count"))
	})
}

// The same count, the answers that will not change marked Permanent and
// the server's wait handed on.
//
// case: clean
func countClassified(ctx context.Context, hc *http.Client, url string) (int, error) {
	return cenkwrap.Spread(ctx, func() (int, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return strconv.Atoi(resp.Header.Get("X-Count"))
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
			s, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			return 0, backoff.RetryAfter(s)
		case resp.StatusCode >= http.StatusInternalServerError:
			return 0, errServer
		}
		return 0, backoff.Permanent(fmt.Errorf("unexpected status %d", resp.StatusCode))
	})
}
