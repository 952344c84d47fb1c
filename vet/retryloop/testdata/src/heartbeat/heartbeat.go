// Package heartbeat holds, written anew, a keepalive loop that asks a
// server whether it is healthy through a helper answering (healthy bool,
// err error) and stops at the first failure, and a loop that asks again
// after each failed request.
package heartbeat

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

type agent struct {
	cli  *http.Client
	base string
}

func (a *agent) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.cli.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", path, resp.StatusCode)
	}
	return io.ReadAll(resp.Body)
}

// healthy makes its own request: its error is that request's, not a
// verdict on another.
func (a *agent) healthy(ctx context.Context) (bool, error) {
	b, err := a.get(ctx, "/health")
	if err != nil {
		return false, err
	}
	if string(b) != "ALIVE" {
		return false, nil
	}
	return true, nil
}

// keepAlive asks on every tick and stops at the first failure or
// unhealthy answer: nothing is asked again after a failure.
//
// case: clean
func (a *agent) keepAlive(ctx context.Context, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if ok, err := a.healthy(ctx); err != nil || !ok {
			return
		}
	}
}

// register asks again a constant second after each failed check, up to
// ten times, whatever the check answered when it got through: a retry of
// the check's request on every error, a 404 or a 503 alike.
//
// case: flag unclassified nojitter retryafter
func (a *agent) register(ctx context.Context) error {
	for i := 0; i < 10; i++ { // want `unclassified: retry loop around agent.healthy retries on every error`
		if _, err := a.healthy(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
		}
	}
	return context.DeadlineExceeded
}
