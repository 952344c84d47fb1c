// Package flaky has one retry storm in waiting and one ignored finding.
package flaky

import (
	"context"
	"net/http"
	"time"
)

// Fetch retries every error and every non-2xx answer on a fixed period.
func Fetch(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	for i := 0; i < 5; i++ {
		resp, err := c.Do(req.WithContext(ctx))
		if err == nil && resp.StatusCode < 300 {
			return resp, nil
		}
		time.Sleep(time.Second)
	}
	return nil, ctx.Err()
}

// Warm waits at startup.
func Warm(ctx context.Context) {
	//recoil:ignore deafwait runs once at startup, before any caller exists
	time.Sleep(10 * time.Millisecond)
}
