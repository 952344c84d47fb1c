// Package shutdowns holds, written anew, loops that pause deaf to their
// context only once that context is done — on the way out, with nothing
// left to hear — beside one that pauses deaf while it still runs.
package shutdowns

import (
	"context"
	"net/http"
	"time"
)

type recorder struct {
	frames int
	stop   func() error
}

// teardown gives the last commands time to finish, then stops.
func (r *recorder) teardown() error {
	time.Sleep(500 * time.Millisecond)
	return r.stop()
}

// capture stands for one frame taken from a local page.
func (r *recorder) capture() { r.frames++ }

// record takes a frame every interval until ctx is done, then tears down:
// the deaf pause comes after the cancellation it could have heard.
//
// case: clean
func (r *recorder) record(ctx context.Context, interval time.Duration) {
	for {
		select {
		case <-ctx.Done():
			_ = r.teardown()
			return
		case <-time.After(interval):
			r.capture()
		}
	}
}

// drain polls until ctx ends; when it has ended it waits a moment for
// in-flight work before it returns.
//
// case: clean
func drain(ctx context.Context, pending func() int) {
	for pending() > 0 {
		if ctx.Err() != nil {
			time.Sleep(100 * time.Millisecond)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// ping re-sends on a transport error after a pause deaf to ctx, which is
// still running: that pause is reported.
//
// case: flag deafwait nojitter
func ping(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
		resp, err := hc.Do(req.WithContext(ctx))
		if err == nil || i == 3 {
			return resp, err
		}
		time.Sleep(time.Second) // want `deafwait: time.Sleep ignores ctx` `nojitter: this wait in a retry loop`
	}
}
