// Package joins holds retry loops whose outcomes are told apart before
// their paths join again, and loops that try each of a list of servers
// before they wait. Written for these tests.
package joins

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// case: flag unclassified nojitter retryafter
func probeAll(ctx context.Context, c *http.Client, urls []string) error {
	var last error
	stop := false
	for !stop { // want `unclassified: retry loop around Client\.Do retries on every error and on every non-2xx status`
		for _, u := range urls {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				return err
			}
			resp, err := c.Do(req)
			if err != nil {
				last = err
			} else if resp.StatusCode < 300 {
				resp.Body.Close()
				return nil
			} else {
				resp.Body.Close()
				last = errors.New(resp.Status)
			}
		}
		select {
		case <-ctx.Done():
			stop = true
		case <-time.After(2 * time.Second): // want `nojitter: this wait` `retryafter: retry loop retries 429 and 503`
		}
	}
	return last
}

// case: flag nojitter
func joinThenWait(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	for n := 0; n < 5; n++ {
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return nil, err
			}
		} else if resp.StatusCode == http.StatusBadGateway {
			resp.Body.Close()
		} else {
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second << n): // want `nojitter: this wait`
		}
	}
	return nil, errors.New("gave up")
}

// case: clean
func failover(ctx context.Context, c *http.Client, urls []string) (*http.Response, error) {
	for round := 0; round < 3; round++ {
		for _, u := range urls {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				return nil, err
			}
			resp, err := c.Do(req)
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusGatewayTimeout {
				return resp, nil
			}
			resp.Body.Close()
		}
		d := time.Duration(rand.Int64N(int64(time.Second << round)))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	}
	return nil, errors.New("no server answered")
}
