// Package decorate holds retry loops an HTTP client library hands its
// users as decorators: the loop is in a function literal, its client is an
// interface with http.Client.Do's shape, and its wait is the user's
// duration scaled by the attempt. Written for these tests.
package decorate

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Doer sends a request.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// DoerFunc is a function that sends a request.
type DoerFunc func(*http.Request) (*http.Response, error)

// Do calls f.
func (f DoerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// MaxThrottleWait caps the wait after a 429; zero means no cap.
var MaxThrottleWait time.Duration

// pause waits base·2^n, at most limit when limit is set; false if done
// closes first.
func pause(base, limit time.Duration, n int, done <-chan struct{}) bool {
	d := base << n
	if limit > 0 && d > limit {
		d = limit
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// case: flag unclassified nojitter
func Retrying(tries int, base time.Duration) func(Doer) Doer {
	return func(next Doer) Doer {
		return DoerFunc(func(r *http.Request) (*http.Response, error) {
			var resp *http.Response
			var err error
			for i := 0; i < tries; i++ { // want `unclassified: retry loop around Doer.Do retries on every error`
				resp, err = next.Do(r)
				if err == nil {
					return resp, nil
				}
				if !pause(base, 0, i, r.Context().Done()) { // want `nojitter: pause in a retry loop has a constant or purely exponential duration whatever its caller passes`
					return nil, r.Context().Err()
				}
			}
			return resp, err
		})
	}
}

// RetryingThrottled retries 429s through retryThrottled.
func RetryingThrottled(tries int, base time.Duration) func(Doer) Doer {
	return func(next Doer) Doer {
		return DoerFunc(func(r *http.Request) (*http.Response, error) {
			return retryThrottled(next, r, tries, base)
		})
	}
}

// case: flag nojitter
func retryThrottled(next Doer, r *http.Request, tries int, base time.Duration) (*http.Response, error) {
	limit := time.Duration(0)
	var resp *http.Response
	var err error
	for i := 0; i < tries; i++ {
		resp, err = next.Do(r)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			return resp, err
		}
		resp.Body.Close()
		if d := resp.Header.Get("Retry-After"); d != "" {
			limit = MaxThrottleWait
		}
		if !pause(base, limit, i, r.Context().Done()) { // want `nojitter`
			return nil, r.Context().Err()
		}
	}
	return resp, err
}

// Its wait is the caller's function: nothing to say of its jitter.
//
// case: flag retryafter
func Waiting(ctx context.Context, next Doer, r *http.Request, wait func(int) time.Duration) (*http.Response, error) { // want Waiting:`remote=1 waits=true deaf=false jitter=0`
	for i := 0; ; i++ {
		resp, err := next.Do(r.WithContext(ctx))
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
			return resp, err
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait(i)): // want `retryafter: retry loop retries 503 without reading Retry-After`
		}
	}
}

// rewind resets a request's body for another try.
func rewind(r *http.Request) error {
	if r.GetBody == nil {
		return nil
	}
	b, err := r.GetBody()
	if err != nil {
		return err
	}
	r.Body = b
	return nil
}

// The error variable first holds the rewind's error, then the call's: the
// first test says nothing of how the call failed.
//
// case: flag unclassified nojitter
func Resending(tries int, base time.Duration) func(Doer) Doer {
	return func(next Doer) Doer {
		return DoerFunc(func(r *http.Request) (*http.Response, error) {
			var resp *http.Response
			var err error
			for i := 0; i < tries; i++ { // want `unclassified: retry loop around Doer.Do retries on every error`
				err = rewind(r)
				if err != nil {
					return nil, err
				}
				resp, err = next.Do(r)
				if err == nil {
					return resp, nil
				}
				if !pause(base, 0, i, r.Context().Done()) { // want `nojitter: pause in a retry loop has a constant or purely exponential duration whatever its caller passes`
					return nil, r.Context().Err()
				}
			}
			return resp, err
		})
	}
}

// Rule says whether a failed try is worth another, and after how long.
type Rule interface {
	Retry(resp *http.Response, err error) (bool, time.Duration)
}

// The verdict is relayed through a flag: the first rule that says retry
// sets it, under an if on the rule's answer.
//
// case: clean
func ruled(ctx context.Context, next Doer, r *http.Request, rules []Rule) (*http.Response, error) {
	for i := 0; i < 5; i++ {
		resp, err := next.Do(r.WithContext(ctx))
		if err == nil && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return resp, nil
		}
		again := false
		var wait time.Duration
		for _, rule := range rules {
			if ok, d := rule.Retry(resp, err); ok {
				again, wait = true, d
				break
			}
		}
		if !again {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil, errors.New("gave up")
}
