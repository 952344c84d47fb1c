// Package rewraps holds, written anew, go-retry backoffs built the way its
// own documentation builds them: one variable, wrapped in place.
package rewraps

import (
	"context"
	"net/http"
	"time"

	"github.com/sethvargo/go-retry"
)

type uploader struct {
	hc  *http.Client
	url string
}

func (u *uploader) send(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.url, nil)
	if err != nil {
		return err
	}
	resp, err := u.hc.Do(req)
	if err != nil {
		return retry.RetryableError(err)
	}
	return resp.Body.Close()
}

// upload doubles from 100 ms, five retries at most: every uploader that
// failed together comes back together.
//
// case: flag nojitter
func (u *uploader) upload(ctx context.Context) error {
	b := retry.NewExponential(100 * time.Millisecond)
	b = retry.WithMaxRetries(5, b)
	return retry.Do(ctx, b, u.send) // want `nojitter: retry.Do waits a constant or purely exponential schedule`
}

// uploadJittered is upload's twin with the backoff jittered in place too.
//
// case: clean
func (u *uploader) uploadJittered(ctx context.Context) error {
	b := retry.NewExponential(100 * time.Millisecond)
	b = retry.WithMaxRetries(5, b)
	b = retry.WithJitterPercent(20, b)
	return retry.Do(ctx, b, u.send)
}

// uploadRetried wraps its constant backoff twice in one statement, the
// first value taken from a tuple as go-retry's first releases made it.
//
// case: flag nojitter
func (u *uploader) uploadRetried(ctx context.Context, tries uint64) error {
	b, _ := newConstant(time.Second)
	b = retry.WithMaxRetries(tries, retry.WithMaxRetries(10, b))
	return retry.Do(ctx, b, u.send) // want `nojitter: retry.Do waits a constant or purely exponential schedule`
}

func newConstant(d time.Duration) (retry.Backoff, error) {
	return retry.NewConstant(d), nil
}
