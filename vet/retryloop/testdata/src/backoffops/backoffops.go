// Package backoffops holds, written anew, retries driven by
// cenkalti/backoff whose operation makes an HTTP call and hands the
// library a 429 or a 503 as an ordinary error: the library retries it on
// its own schedule, never the server's.
package backoffops

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cenkalti/backoff/v4"
	backoff5 "github.com/cenkalti/backoff/v5"
	"github.com/cenkalti/backofflike"
)

// Only a 429 goes round, on the library's jittered schedule; the
// server's Retry-After is never read.
//
// case: flag retryafter
func fetch(hc *http.Client, req *http.Request) (*http.Response, error) {
	var out *http.Response
	op := func() error {
		resp, err := hc.Do(req)
		if err != nil {
			return backoff.Permanent(err)
		}
		if req.Method == http.MethodGet && resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			return errors.New("too many requests")
		}
		out = resp
		return nil
	}
	if err := backoff.RetryNotify(op, backoff.NewExponentialBackOff(), nil); err != nil { // want `retryafter: backoff.RetryNotify retries 429 without reading Retry-After`
		return nil, err
	}
	return out, nil
}

// Every 5xx goes round, written in place, by a switch.
//
// case: flag retryafter
func post(hc *http.Client, url string) error {
	return backoff.Retry(func() error { // want `retryafter: backoff.Retry retries 503 without reading Retry-After: .*read it \(recoilhttp.ServerWait; cenkalti/backoff v5 adds backoff.RetryAfter\)`
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode >= 500:
			return fmt.Errorf("server error %d", resp.StatusCode)
		case resp.StatusCode >= 400:
			return backoff.Permanent(fmt.Errorf("client error %d", resp.StatusCode))
		}
		return nil
	}, backoff.NewExponentialBackOff())
}

// The 429 is permanent: the library stops, the caller decides. A
// transport error goes round on a wait the request's context cannot cut
// short (the BackOff has no WithContext), a cancelled request's included.
//
// case: flag deafwait
func fetchOnce(hc *http.Client, req *http.Request) error {
	return backoff.Retry(func() error { // want `deafwait: backoff.Retry waits on a context of its own \(its BackOff has no WithContext\) and cannot hear req.Context\(\)`
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			return backoff.Permanent(errors.New("rate limited"))
		}
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
			return errors.New("server error")
		}
		return nil
	}, backoff.NewExponentialBackOff())
}

// The operation reads the server's wait and hands it on; its transport
// errors go round deaf to the request's context, as fetchOnce's do.
//
// case: flag deafwait
func fetchHeard(hc *http.Client, req *http.Request, wait func(string)) error {
	return backoff.Retry(func() error { // want `deafwait: backoff.Retry waits on a context of its own`
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			wait(resp.Header.Get("Retry-After"))
			return errors.New("rate limited")
		}
		return nil
	}, backoff.NewExponentialBackOff())
}

// An operation that calls nothing remote: a local step retried.
//
// case: clean
func local(step func() (int, error)) error {
	return backoff.Retry(func() error {
		code, err := step()
		if err != nil {
			return err
		}
		if code == http.StatusTooManyRequests {
			return errors.New("busy")
		}
		return nil
	}, backoff.NewExponentialBackOff())
}

// v5's Retry with a 429 handed back as an ordinary error: v5 can take the
// server's wait (backoff.RetryAfter), and the remedy says so.
//
// case: flag retryafter
func fetch5(ctx context.Context, hc *http.Client, req *http.Request) (int, error) {
	return backoff5.Retry(ctx, func() (int, error) { // want `retryafter: backoff.Retry retries 429 without reading Retry-After: .*return backoff.RetryAfter\(seconds\)`
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			return 0, errors.New("rate limited")
		}
		return resp.StatusCode, nil
	})
}

// v5's Retry handed the server's wait: heard.
//
// case: clean
func fetch5Heard(ctx context.Context, hc *http.Client, req *http.Request) (int, error) {
	return backoff5.Retry(ctx, func() (int, error) {
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			return 0, backoff5.RetryAfter(30)
		}
		return resp.StatusCode, nil
	})
}

// A package whose path only begins as cenkalti/backoff's: its Retry is
// not that library's and tries once.
//
// case: clean
func fetchLike(hc *http.Client, req *http.Request) error {
	return backofflike.Retry(func() error {
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			return errors.New("rate limited")
		}
		return nil
	})
}

// A status tested in an else-if, after a branch a hook decides: every
// non-200 goes round on the library's schedule, 401 and 404 as much as
// 429 and 503.
//
// case: flag unclassified retryafter
func connect(hc *http.Client, url string, check func(*http.Response) error) error {
	return backoff.Retry(func() error { // want `unclassified: backoff.Retry retries 400, 401, 403, 404, 413, 422, statuses that will not change` `retryafter: backoff.Retry retries 429 and 503 without reading Retry-After`
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if check != nil {
			return check(resp)
		} else if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}, backoff.NewExponentialBackOff())
}

// The same chain with a status the else-if makes permanent.
//
// case: clean
func connectOnce(hc *http.Client, url string, check func(*http.Response) error) error {
	return backoff.Retry(func() error {
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if check != nil {
			return check(resp)
		} else if resp.StatusCode != http.StatusOK {
			return backoff.Permanent(fmt.Errorf("status %d", resp.StatusCode))
		}
		return nil
	}, backoff.NewExponentialBackOff())
}
