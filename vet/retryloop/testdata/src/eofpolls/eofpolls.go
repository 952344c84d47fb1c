// Package eofpolls holds, written anew, a job queue's long poll whose
// helper turns an empty answer into io.EOF and every other non-2xx
// status into an error, beside loops that classify.
package eofpolls

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

type queue struct {
	hc  *http.Client
	url string
}

// fetch asks for the next job: io.EOF when there is none (204), an error
// for any other status but 200.
func (q *queue) fetch(ctx context.Context, job *string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, q.url, nil)
	if err != nil {
		return err
	}
	resp, err := q.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		b, err := io.ReadAll(resp.Body)
		*job = string(b)
		return err
	case http.StatusNoContent:
		return io.EOF
	}
	return errors.New(resp.Status)
}

// next asks again at once when the queue was empty and after ten
// seconds on any other failure: either way every failure goes round, a
// 401 and a 404 with the 503s, on a constant wait that reads no
// Retry-After.
//
// case: flag unclassified nojitter retryafter
func (q *queue) next(ctx context.Context) (string, error) {
	var job string
	for { // want `unclassified: retry loop around queue.fetch retries on every error`
		err := q.fetch(ctx, &job)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return "", err
			} else if !errors.Is(err, io.EOF) {
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(10 * time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
				}
			}
			continue
		}
		return job, nil
	}
}

// nextOrStop leaves when the caller has given up and retries every other
// failure, after the same constant wait.
//
// case: flag unclassified nojitter retryafter
func (q *queue) nextOrStop(ctx context.Context) (string, error) {
	var job string
	for { // want `unclassified: retry loop around queue.fetch retries on every error`
		err := q.fetch(ctx, &job)
		if err == nil {
			return job, nil
		}
		if errors.Is(err, context.Canceled) {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
		}
	}
}

// nextTimeouts retries only its own timeouts, each after a jittered
// wait; any other failure is returned.
//
// case: clean
func (q *queue) nextTimeouts(ctx context.Context, jitter func(time.Duration) time.Duration) (string, error) {
	var job string
	for {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := q.fetch(actx, &job)
		cancel()
		if err == nil {
			return job, nil
		}
		if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(jitter(time.Second)):
		}
	}
}

// nextEmptyOnly asks again only when the queue was empty; any other
// failure is returned.
//
// case: clean
func (q *queue) nextEmptyOnly(ctx context.Context) (string, error) {
	var job string
	for {
		err := q.fetch(ctx, &job)
		if errors.Is(err, io.EOF) {
			continue
		}
		return job, err
	}
}
