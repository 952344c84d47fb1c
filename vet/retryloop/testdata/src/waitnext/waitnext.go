// Package waitnext holds, written anew, loops paced by another package's
// Retry interface (for retry.WaitNext(ctx) { … }): its one
// implementation waits, so the loop is a retry loop, judged as one.
package waitnext

import (
	"context"
	"errors"
	"net/http"

	"example.com/retrynext"
)

var errStatus = errors.New("status not reported")

// A status report sent again on every answer but a 2xx, a 400 or 403 as
// much as a 503.
//
// case: flag unclassified retryafter
func report(ctx context.Context, c *http.Client, req *http.Request) error {
	retry := retrynext.NewRetry(10)
	for retry.WaitNext(ctx) { // want `unclassified: retry loop around Client.Do retries on every error and on every non-2xx status` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode < 300 {
			return nil
		}
	}
	return errStatus
}

// The same report sent again only on a transport error, a 502 or a 504.
//
// case: clean
func reportClassified(ctx context.Context, c *http.Client, req *http.Request) error {
	retry := retrynext.NewRetry(10)
	for retry.WaitNext(ctx) {
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			continue
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusGatewayTimeout:
			continue
		}
		if resp.StatusCode < 300 {
			return nil
		}
		return errStatus
	}
	return errStatus
}
