// Package typedstatus holds, written anew, retry loops around a helper of
// the package that makes the HTTP call and turns every answer that is not
// a 2xx into an error of its own type carrying the status; the loop
// switches on the error's type and reads the status from it.
package typedstatus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// statusError is a non-2xx answer.
type statusError struct {
	StatusCode int
	Body       []byte
}

func (e *statusError) Error() string { return fmt.Sprintf("http %d", e.StatusCode) }

// fetch sends one request; a non-2xx answer comes back as *statusError.
func fetch(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		resp.Body.Close()
		return nil, &statusError{StatusCode: resp.StatusCode}
	}
	return resp, nil
}

// retryable names the statuses worth another try.
func retryable(status int) bool {
	switch status {
	case 408, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// download goes round on retryable statuses (429 and 503 among them) and
// on refused or reset connections, with full jitter; nothing reads
// Retry-After.
//
// case: flag retryafter
func download(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	var err error
	for i := 0; i < 5; i++ {
		if i > 0 {
			select {
			case <-time.After(rand.N(2 * time.Second)): // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var resp *http.Response
		resp, err = fetch(ctx, hc, u)
		if err == nil {
			return resp, nil
		}
		switch err.(type) {
		case *statusError:
			se := err.(*statusError)
			if !retryable(se.StatusCode) {
				return nil, se
			}
			continue
		case *url.Error:
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
				continue
			}
			return nil, err
		default:
			return nil, err
		}
	}
	return nil, err
}

// downloadAny goes round on every *statusError, a 404 and a 401 as much
// as a 503, on a constant second.
//
// case: flag unclassified nojitter retryafter
func downloadAny(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	var err error
	for i := 0; i < 5; i++ { // want `unclassified: retry loop around fetch retries on every non-2xx status`
		var resp *http.Response
		resp, err = fetch(ctx, hc, u)
		if err == nil {
			return resp, nil
		}
		switch err.(type) {
		case *statusError:
		default:
			return nil, err
		}
		select {
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, err
}

// downloadQuiet goes round only on 502 and 504, with full jitter.
//
// case: clean
func downloadQuiet(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	var err error
	for i := 0; i < 5; i++ {
		var resp *http.Response
		resp, err = fetch(ctx, hc, u)
		if err == nil {
			return resp, nil
		}
		switch e := err.(type) {
		case *statusError:
			if e.StatusCode != 502 && e.StatusCode != 504 {
				return nil, err
			}
		default:
			return nil, err
		}
		select {
		case <-time.After(rand.N(time.Second)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, err
}

// fetchParsed reads the status from the status line's text and returns a
// *statusError for anything but a 2xx: the status is folded into the
// error, though no test of resp.StatusCode shows it.
func fetchParsed(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	code, _ := strconv.Atoi(strings.Fields(resp.Status)[0])
	if !good(code) {
		resp.Body.Close()
		se := statusError{StatusCode: code}
		return nil, &se
	}
	return resp, nil
}

func good(code int) bool { return code >= 200 && code < 300 }

// mirror goes round on every error of fetchParsed, a 403 as much as a
// 503, with full jitter.
//
// case: flag unclassified retryafter
func mirror(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	var err error
	for i := 0; i < 4; i++ { // want `unclassified: retry loop around fetchParsed retries on every error`
		var resp *http.Response
		if resp, err = fetchParsed(ctx, hc, u); err == nil {
			return resp, nil
		}
		select {
		case <-time.After(rand.N(time.Second)): // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, err
}

// mirrorQuiet goes round on fetchParsed's 502 and 504 alone, found by
// errors.As, with full jitter.
//
// case: clean
func mirrorQuiet(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	var err error
	for i := 0; i < 4; i++ {
		var resp *http.Response
		if resp, err = fetchParsed(ctx, hc, u); err == nil {
			return resp, nil
		}
		var se *statusError
		if !errors.As(err, &se) || (se.StatusCode != 502 && se.StatusCode != 504) {
			return nil, err
		}
		select {
		case <-time.After(rand.N(time.Second)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, err
}
