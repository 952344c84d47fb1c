// Package alltrue holds, written anew, a bundle fetcher whose retry
// classifier tests the error several ways and answers true whichever way
// the tests go: every failure is retried, a 404 as much as a 503.
package alltrue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
)

// StatusError is a non-2xx answer.
type StatusError struct {
	Code   int
	Header http.Header
}

func (e *StatusError) Error() string { return fmt.Sprintf("bundle: status %d", e.Code) }

type wrapped struct{ err error }

func (w wrapped) Error() string { return w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

func get(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, wrapped{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, &StatusError{Code: resp.StatusCode, Header: resp.Header}
	}
	return io.ReadAll(resp.Body)
}

// transient looks through the wrapping and at the error's kind, and on
// every path it takes says "retry".
func transient(err error) bool {
	var w wrapped
	if errors.As(err, &w) {
		err = w.err
	}
	if err == io.ErrUnexpectedEOF {
		return true
	}
	switch err.(type) {
	case net.Error:
		return true
	case *net.OpError:
		return true
	}
	return true
}

// fetchBundle retries whatever transient says, which is everything, with
// a jittered wait that hears ctx: a 404 is fetched again, and a 429 waits
// its own backoff rather than the server's.
//
// case: flag unclassified retryafter
func fetchBundle(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	var err error
	for attempt := range 5 { // want `unclassified: retry loop around get retries on every error`
		var b []byte
		b, err = get(ctx, c, url)
		if err == nil {
			return b, nil
		}
		if !transient(err) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second << attempt)): // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		}
	}
	return nil, err
}

// worthRetry is transient's twin that answers false for a status the
// server will answer the same way again.
func worthRetry(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusTooManyRequests || se.Code >= 500
	}
	var w wrapped
	if errors.As(err, &w) {
		err = w.err
	}
	if err == io.ErrUnexpectedEOF {
		return true
	}
	return true
}

// fetchBundleSorted is fetchBundle's twin with a classifier that says no
// to the 4xx but 429, and that waits what the server asked.
//
// case: clean
func fetchBundleSorted(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	var err error
	for attempt := range 5 {
		var b []byte
		b, err = get(ctx, c, url)
		if err == nil {
			return b, nil
		}
		if !worthRetry(err) {
			return nil, err
		}
		wait := rand.N(time.Second << attempt)
		var se *StatusError
		if errors.As(err, &se) {
			if s, err := strconv.Atoi(se.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil, err
}

// unlessCanceled says "retry" to every error but the caller's own
// cancellation, which no dependency's failure is.
func unlessCanceled(err error) bool {
	var w wrapped
	if errors.As(err, &w) {
		err = w.err
	}
	switch err {
	case context.Canceled:
		return false
	case io.ErrUnexpectedEOF:
		return true
	}
	return true
}

// syncMirror retries every failure of the dependency, a 403 as much as a
// 503, stopping only when its own caller gives up.
//
// case: flag unclassified retryafter
func syncMirror(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	var err error
	for attempt := range 4 { // want `unclassified: retry loop around get retries on every error`
		var b []byte
		if b, err = get(ctx, c, url); err == nil {
			return b, nil
		}
		if !unlessCanceled(err) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second << attempt)): // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		}
	}
	return nil, err
}

// syncMirrorErrorsIs is syncMirror with the cancellation told apart by
// errors.Is and the 4xx but 429 by their status.
//
// case: clean
func syncMirrorErrorsIs(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	var err error
	for attempt := range 4 {
		var b []byte
		if b, err = get(ctx, c, url); err == nil {
			return b, nil
		}
		var se *StatusError
		if errors.Is(err, context.Canceled) || errors.As(err, &se) && se.Code < 500 && se.Code != http.StatusTooManyRequests {
			return nil, err
		}
		wait := rand.N(time.Second << attempt)
		if se != nil {
			if s, err := strconv.Atoi(se.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil, err
}
