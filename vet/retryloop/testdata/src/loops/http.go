// Package loops holds hand-written retry loops around HTTP calls, written
// the ways real code writes them. Each function is one labelled case: the
// checks a careful reviewer would report ("flag"), or none ("clean").
package loops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Only the transport's failures go round: every answer, whatever its
// status, is returned (classified since the ninth round).
//
// case: flag nojitter deafwait
func countedEveryError(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	var lastErr error
	for i := 0; i < 5; i++ {
		resp, err := c.Do(req)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		time.Sleep(time.Second) // want `deafwait: time\.Sleep ignores ctx` `nojitter: this wait in a retry loop has a constant or purely exponential duration`
	}
	return nil, lastErr
}

// case: flag unclassified nojitter unbounded retryafter
func foreverNon2xx(c *http.Client, url string) ([]byte, error) {
	attempts := 0
	for { // want `unbounded: retry loop has no bound on attempts or total time` `unclassified: retry loop around Client\.Get retries on every error and on every non-2xx status`
		resp, err := c.Get(url)
		if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
			defer resp.Body.Close()
			return io.ReadAll(resp.Body)
		}
		if resp != nil {
			resp.Body.Close()
		}
		attempts++
		time.Sleep(time.Duration(1<<attempts) * 100 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
	}
}

// case: flag unclassified nojitter retryafter deafwait
func statusNotOK(c *http.Client, req *http.Request) (*http.Response, error) {
	base := 200 * time.Millisecond
	for attempt := 0; attempt < 4; attempt++ { // want `unclassified: retry loop around Client\.Do retries on every non-2xx status`
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			time.Sleep(base << attempt) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After` `deafwait: time\.Sleep ignores req\.Context\(\)`
			continue
		}
		return resp, nil
	}
	return nil, errors.New("gave up")
}

// case: flag unclassified retryafter deafwait
func switchWithPermanent(c *http.Client, req *http.Request) (*http.Response, error) {
	for i := range 3 { // want `unclassified: retry loop around Client\.Do retries on 400, which will not change on a retry`
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("attempt %d: %w", i, err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			return resp, nil
		case http.StatusBadRequest, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			resp.Body.Close()
			time.Sleep(time.Duration(rand.IntN(1000)) * time.Millisecond) // want `retryafter: retry loop retries 429 and 503 without reading Retry-After` `deafwait: time\.Sleep ignores req\.Context\(\)`
		default:
			return nil, fmt.Errorf("status %d", resp.StatusCode)
		}
	}
	return nil, errors.New("gave up")
}

// case: flag unclassified retryafter
func labelledWithUnauthorized(c *http.Client, reqs []*http.Request) error {
outer:
	for _, req := range reqs {
		for attempt := 0; attempt < 3; attempt++ { // want `unclassified: retry loop around Client\.Do retries on 401, which will not change on a retry`
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode == 401 || resp.StatusCode >= 500 {
				time.Sleep(jittered(attempt)) // want `retryafter: retry loop retries 503 without reading Retry-After`
				continue
			}
			if resp.StatusCode < 300 {
				continue outer
			}
			return fmt.Errorf("status %d", resp.StatusCode)
		}
	}
	return nil
}

func jittered(attempt int) time.Duration {
	return time.Duration(rand.Int64N(int64(100*time.Millisecond) << attempt))
}

// case: flag nojitter deafwait retryafter
func helperSleepsFixed(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 1; attempt <= 3; attempt++ {
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil, err
			}
			pause(attempt) // want `deafwait: pause waits with time\.Sleep and cannot hear ctx` `nojitter: pause in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
			continue
		}
		if resp.StatusCode == 429 || resp.StatusCode >= 500 {
			resp.Body.Close()
			pause(attempt) // want `deafwait: pause waits with time\.Sleep and cannot hear ctx` `nojitter: pause in a retry loop has a constant or purely exponential duration`
			continue
		}
		return resp, nil
	}
	return nil, errors.New("gave up")
}

// pause waits a purely exponential time.
func pause(attempt int) {
	time.Sleep(time.Duration(attempt*attempt) * time.Second)
}

// case: clean
func classifiedWithRetryAfter(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 4; attempt++ {
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil || !temporary(err) {
				return nil, err
			}
		} else if resp.StatusCode == 429 || resp.StatusCode == 503 {
			resp.Body.Close()
			wait := time.Duration(rand.Int64N(int64(time.Second << attempt)))
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
				wait = time.Duration(s) * time.Second
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
			continue
		} else {
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(time.Second << attempt)))):
		}
	}
	return nil, errors.New("gave up")
}

func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// case: flag unclassified nojitter retryafter deafwait
func roundTripperWrapped(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for tries := 0; tries < 3; tries++ { // want `unclassified: retry loop around RoundTripper\.RoundTrip retries on every error and on every non-2xx status`
		resp, err = rt.RoundTrip(req)
		if err != nil {
			err = fmt.Errorf("round trip: %w", err)
			time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After` `deafwait: time\.Sleep ignores req\.Context\(\)`
			continue
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `deafwait: time\.Sleep ignores req\.Context\(\)`
	}
	return resp, err
}

// case: flag unclassified deafwait retryafter
func waitViaNamedVar(ctx context.Context, c *http.Client, req *http.Request, delay time.Duration) (*http.Response, error) {
	for n := 0; n < 3; n++ { // want `unclassified: retry loop around Client\.Do retries on every error and on 400, 401, 403, 404, 413, 422, which will not change on a retry`
		resp, err := c.Do(req)
		ok := err == nil && resp.StatusCode < 400
		if ok {
			return resp, nil
		}
		time.Sleep(delay) // want `deafwait: time\.Sleep ignores ctx` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
	}
	return nil, errors.New("gave up")
}

// case: flag unclassified nojitter unbounded retryafter
func postUntilAccepted(c *http.Client, url string, body io.ReadSeeker) error {
	for { // want `unbounded: retry loop has no bound on attempts or total time` `unclassified: retry loop around Client\.Post retries on every error and on every non-2xx status`
		body.Seek(0, io.SeekStart)
		resp, err := c.Post(url, "application/json", body)
		if err != nil {
			time.Sleep(500 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusAccepted {
			return nil
		}
		<-time.After(500 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
	}
}

// case: flag unbounded
func classifiedButForever(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	var wait time.Duration = 100 * time.Millisecond
	for { // want `unbounded: retry loop has no bound on attempts or total time`
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 503 {
			return resp, nil
		}
		ra := resp.Header.Get("Retry-After")
		resp.Body.Close()
		if ra != "" {
			if s, err := strconv.Atoi(ra); err == nil {
				wait = time.Duration(s) * time.Second
			}
		}
		timer := time.NewTimer(wait + time.Duration(rand.Int64N(int64(wait))))
		<-timer.C
	}
}

// case: clean
func deadlineBounded(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := c.Do(req)
		if err == nil && resp.StatusCode != 502 && resp.StatusCode != 504 {
			return resp, nil
		}
		if err != nil && !isTimeout(err) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, errors.New("deadline")
		}
		t := time.NewTimer(time.Duration(rand.Int64N(int64(time.Second))))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
