// Package sleepsignal holds, written anew, retry loops that wait by
// starting a goroutine which sleeps and then closes (or sends on) a
// channel, and receiving from that channel: beside ctx.Done() in a
// select the wait hears the caller; on its own it does not.
package sleepsignal

import (
	"context"
	"math"
	"math/rand"
	"net/http"
	"time"
)

// client sends requests to a platform's API.
type client struct {
	hc      *http.Client
	retries int
	base    time.Duration
}

func wantRetry(resp *http.Response, err error) bool {
	return err != nil || resp.StatusCode >= 500 || resp.StatusCode == http.StatusConflict
}

// pause is base doubled per attempt, less a few random milliseconds.
func pause(attempt int, base time.Duration) time.Duration {
	n := math.Pow(2, float64(attempt))
	return time.Duration(n)*base - time.Duration(rand.Intn(4)+1)*time.Millisecond
}

// resend waits in a goroutine that closes ping, selecting on ping and
// ctx.Done(): the caller hears its context, but every 5xx (a 503 among
// them) goes round with no look at Retry-After.
//
// case: flag retryafter
func (c *client) resend(ctx context.Context, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for i := 1; i <= c.retries; i++ {
		ping := make(chan struct{})
		go func() {
			time.Sleep(pause(i, c.base)) // want `retryafter: retry loop retries 503 without reading Retry-After`
			close(ping)
		}()
		select {
		case <-ping:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		resp, err = c.hc.Do(req.WithContext(ctx))
		if ctx.Err() != nil {
			return resp, ctx.Err()
		}
		if !wantRetry(resp, err) {
			return resp, err
		}
	}
	return resp, err
}

// resendQuiet is resend for transport errors only: nothing from the
// server asks for a later try, and the wait is heard.
//
// case: clean
func (c *client) resendQuiet(ctx context.Context, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for i := 1; i <= c.retries; i++ {
		ping := make(chan struct{})
		go func() {
			time.Sleep(pause(i, c.base))
			close(ping)
		}()
		select {
		case <-ping:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		resp, err = c.hc.Do(req.WithContext(ctx))
		if err == nil {
			return resp, nil
		}
	}
	return resp, err
}

// resendFixed sends on the channel after a constant second: the wait is
// heard, but every failed caller comes back on the same beat.
//
// case: flag nojitter
func (c *client) resendFixed(ctx context.Context, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for i := 0; i < c.retries; i++ {
		resp, err = c.hc.Do(req.WithContext(ctx))
		if err == nil {
			return resp, nil
		}
		tick := make(chan bool, 1)
		go func() {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			tick <- true
		}()
		select {
		case <-tick:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return resp, err
}

// resendDeaf receives from the channel on its own: the goroutine's sleep
// is the caller's, and it cannot hear ctx.
//
// case: flag deafwait
func (c *client) resendDeaf(ctx context.Context, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for i := 1; i <= c.retries; i++ {
		resp, err = c.hc.Do(req.WithContext(ctx))
		if err == nil {
			return resp, nil
		}
		ping := make(chan struct{})
		go func() {
			time.Sleep(pause(i, c.base)) // want `deafwait: the receive from ping waits out this goroutine.s time.Sleep and ignores ctx`
			close(ping)
		}()
		<-ping
	}
	return resp, err
}
