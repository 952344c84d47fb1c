// Package retrygora holds, written anew, retries driven by avast/retry-go
// around an API client whose helper hands back every failed answer as an
// error carrying the status: the library waits its own schedule, so a 429
// it lets go round is retried without the server's Retry-After.
package retrygora

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/avast/retry-go/v4"
)

// APIError is a failed answer.
type APIError struct {
	StatusCode int
	RetryAfter time.Duration
	Body       []byte
}

func (e *APIError) Error() string { return fmt.Sprintf("status %d: %s", e.StatusCode, e.Body) }

type client struct {
	http *http.Client
	base string
}

// send makes one request; a non-2xx answer comes back as an *APIError.
func (c *client) send(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode > 299 {
		body, _ := io.ReadAll(resp.Body)
		return &APIError{StatusCode: resp.StatusCode, Body: body}
	}
	return nil
}

// sendTold is send that also reads the server's wait.
func (c *client) sendTold(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode > 299 {
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return &APIError{StatusCode: resp.StatusCode, RetryAfter: time.Duration(secs) * time.Second}
	}
	return nil
}

// Only a 429 goes round, on retry-go's jittered schedule: the server's
// Retry-After is never read.
//
// case: flag retryafter
func (c *client) getLimited(ctx context.Context, path string) error {
	return retry.Do(func() error { // want `retryafter: retry.Do retries 429 without reading Retry-After`
		return c.send(ctx, path)
	},
		retry.Attempts(5),
		retry.Delay(time.Second),
		retry.RetryIf(func(err error) bool {
			var target *APIError
			if errors.As(err, &target) && target.StatusCode == http.StatusTooManyRequests {
				return true
			}
			return false
		}),
		retry.LastErrorOnly(true),
		retry.Context(ctx),
	)
}

// Its twin retries only 502s.
//
// case: clean
func (c *client) getGateway(ctx context.Context, path string) error {
	return retry.Do(func() error {
		return c.send(ctx, path)
	},
		retry.Attempts(5),
		retry.RetryIf(func(err error) bool {
			var target *APIError
			return errors.As(err, &target) && target.StatusCode == http.StatusBadGateway
		}),
		retry.Context(ctx),
	)
}

// A switch on the status that lets 429 and 503 through.
//
// case: flag retryafter
func (c *client) getSwitch(ctx context.Context, path string) error {
	return retry.Do(func() error { // want `retryafter: retry.Do retries 429 and 503 without reading Retry-After`
		return c.send(ctx, path)
	},
		retry.RetryIf(func(err error) bool {
			var target *APIError
			if !errors.As(err, &target) {
				return false
			}
			switch target.StatusCode {
			case http.StatusTooManyRequests, http.StatusServiceUnavailable:
				return true
			}
			return false
		}),
		retry.Context(ctx),
	)
}

// A DelayType of its own waits what the error carries.
//
// case: clean
func (c *client) getTold(ctx context.Context, path string) error {
	return retry.Do(func() error {
		return c.sendTold(ctx, path)
	},
		retry.RetryIf(func(err error) bool {
			var target *APIError
			return errors.As(err, &target) && target.StatusCode == http.StatusTooManyRequests
		}),
		retry.DelayType(func(n uint, err error, cfg *retry.Config) time.Duration {
			var target *APIError
			if errors.As(err, &target) && target.RetryAfter > 0 {
				return target.RetryAfter
			}
			return retry.CombineDelay(retry.BackOffDelay, retry.RandomDelay)(n, err, cfg)
		}),
		retry.Context(ctx),
	)
}

// No RetryIf: every error goes round, a 400 as much as a 429.
//
// case: flag unclassified retryafter
func (c *client) getEvery(ctx context.Context, path string) error {
	return retry.Do(func() error { // want `unclassified: retry.Do retries every error of client.send` `retryafter: retry.Do retries 429 and 503 without reading Retry-After`
		return c.send(ctx, path)
	}, retry.Attempts(3), retry.Context(ctx))
}

// The work marks what will not change Unrecoverable and lets the rest,
// 429 among them, go round.
//
// case: clean
func (c *client) getMarked(ctx context.Context, path string) error {
	return retry.Do(func() error {
		err := c.send(ctx, path)
		var target *APIError
		if errors.As(err, &target) && target.StatusCode < 500 {
			return retry.Unrecoverable(err)
		}
		return err
	}, retry.Attempts(3), retry.Context(ctx))
}
