// Package resetretrier holds, written anew, long polls paced by a
// retrier in the loop's header (for r := begin(); r.Continue(ctx); {
// …; r.Reset() }): a success starts the schedule over, so its waits are
// a failure's, and the failures that reach them are what the poll
// retries. The poll's call folds the status into its error through a
// test kept in a function literal of its own.
package resetretrier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// retrier waits a jittered, growing time before each round but the
// first, until ctx is done.
type retrier struct{ n int }

func begin() *retrier { return &retrier{} }

// Continue waits before the next round and reports whether to run it.
func (r *retrier) Continue(ctx context.Context) bool { // want Continue:`waits=true deaf=false jitter=2`
	if r.n > 0 {
		t := time.NewTimer(rand.N(time.Duration(r.n) * 100 * time.Millisecond))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	r.n++
	return ctx.Err() == nil
}

// Reset starts the schedule over.
func (r *retrier) Reset() { r.n = 0 }

// statusErr is a failed answer's status.
type statusErr struct{ code int }

func (e *statusErr) Error() string { return fmt.Sprintf("HTTP status %d", e.code) }

// call asks the manager; any answer but a 200 comes back as an error.
func call(ctx context.Context, url string) ([]byte, error) {
	hasError := func(r *http.Response) bool { return r.StatusCode != http.StatusOK }
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if hasError(resp) {
		return nil, fmt.Errorf("cannot call %q: HTTP status %d", url, resp.StatusCode)
	}
	return io.ReadAll(resp.Body)
}

// callRaw reads whatever answer comes: its error is the transport's.
func callRaw(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// The components to start, long-polled from the manager: every failed
// answer, a 400 or 403 as much as a 503, goes round on the retrier,
// and a 429 without its Retry-After.
//
// case: flag unclassified retryafter
func watch(ctx context.Context, url string, apply func([]byte)) {
	for r := begin(); r.Continue(ctx); { // want `unclassified: retry loop around call retries on every error` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		b, err := call(ctx, url)
		if err != nil {
			continue
		}
		apply(b)
		r.Reset()
	}
}

// The same poll that gives up on any failure but a 502 or 503.
//
// case: clean
func watchClassified(ctx context.Context, url string, apply func([]byte)) error {
	for r := begin(); r.Continue(ctx); {
		b, err := call(ctx, url)
		if err != nil {
			var se *statusErr
			if errors.As(err, &se) && (se.code == 502 || se.code == 504) {
				continue
			}
			return err
		}
		apply(b)
		r.Reset()
	}
	return ctx.Err()
}

// A poll whose call hands back any answer: its failures are the
// transport's, no status among them.
//
// case: clean
func watchRaw(ctx context.Context, url string, apply func([]byte)) {
	for r := begin(); r.Continue(ctx); {
		b, err := callRaw(ctx, url)
		if err != nil {
			continue
		}
		apply(b)
		r.Reset()
	}
}
