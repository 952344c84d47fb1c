// Package peekticker holds, written anew, chunk uploads retried a few
// times each, with a ticker that says when to refresh the upload token:
// looked at in a select with a default case it is never waited on.
package peekticker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

var errTransient = errors.New("transient")

// put sends one chunk; a transport error or a 503 is transient, any
// other status but 200 final.
func put(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", errTransient, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusServiceUnavailable:
		return fmt.Errorf("%w: status %d", errTransient, resp.StatusCode)
	}
	return fmt.Errorf("put: status %d", resp.StatusCode)
}

// Each chunk tried again at once on a transient failure, three times at
// most; the token is refreshed when the ticker has fired, without
// waiting for it.
//
// case: clean
func upload(ctx context.Context, hc *http.Client, urls []string, refresh func() error) error {
	ticker := time.NewTicker(50 * time.Minute)
	defer ticker.Stop()
	for _, u := range urls {
		var err error
		for try := 0; try < 3; try++ {
			select {
			case <-ticker.C:
				if err := refresh(); err != nil {
					return err
				}
			default:
			}
			if err = put(ctx, hc, u); err == nil || !errors.Is(err, errTransient) {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// The same loop with no default case: each try waits for the next tick,
// a constant interval.
//
// case: flag nojitter
func uploadPaced(ctx context.Context, hc *http.Client, urls []string, refresh func() error) error {
	ticker := time.NewTicker(2 * time.Second) // want `nojitter: the ticker in a retry loop`
	defer ticker.Stop()
	for _, u := range urls {
		var err error
		for try := 0; try < 3; try++ {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-ticker.C:
				if err := refresh(); err != nil {
					return err
				}
			}
			if err = put(ctx, hc, u); err == nil || !errors.Is(err, errTransient) {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
