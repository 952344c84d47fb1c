// Package retrygohttp holds, written anew, uploads retried by avast/
// retry-go whose work makes the HTTP call itself and turns statuses into
// errors by its own tests: with no RetryIf, every error it returns goes
// round but retry.Unrecoverable's.
package retrygohttp

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/avast/retry-go/v4"
)

// putChunk re-sends a chunk on 5xx and on every status it did not expect,
// a 404 or a 429 among them.
//
// case: flag unclassified retryafter
func putChunk(ctx context.Context, url string, chunk []byte) error {
	return retry.Do(func() error { // want `unclassified: retry.Do retries 400, 401, 403, 404, 413, 422, statuses that will not change: return them as retry.Unrecoverable` `retryafter: retry.Do retries 429 and 503 without reading Retry-After`
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(chunk))
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		switch {
		case res.StatusCode >= 500 && res.StatusCode <= 504:
			return fmt.Errorf("server error: %d", res.StatusCode)
		case res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK:
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}, retry.Context(ctx), retry.Attempts(3), retry.Delay(time.Second))
}

// putMarked marks every status it did not expect below 500
// Unrecoverable: only 5xx go round, 503 among them.
//
// case: flag retryafter
func putMarked(ctx context.Context, url string, chunk []byte) error {
	return retry.Do(func() error { // want `retryafter: retry.Do retries 503 without reading Retry-After`
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(chunk))
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode >= 500 {
			return fmt.Errorf("server error: %d", res.StatusCode)
		}
		if res.StatusCode != http.StatusOK {
			return retry.Unrecoverable(fmt.Errorf("status %d", res.StatusCode))
		}
		return nil
	}, retry.Context(ctx), retry.Attempts(3))
}

// putPicked lets a RetryIf of its own decide: left to it.
//
// case: clean
func putPicked(ctx context.Context, url string, chunk []byte) error {
	return retry.Do(func() error {
		res, err := http.Post(url, "application/octet-stream", bytes.NewReader(chunk))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}, retry.Context(ctx), retry.Attempts(3), retry.RetryIf(func(err error) bool { return false }))
}

// putBadGateway re-sends only a 502.
//
// case: clean
func putBadGateway(ctx context.Context, url string, chunk []byte) error {
	return retry.Do(func() error {
		res, err := http.Post(url, "application/octet-stream", bytes.NewReader(chunk))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode == http.StatusBadGateway {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}, retry.Context(ctx), retry.Attempts(3))
}
