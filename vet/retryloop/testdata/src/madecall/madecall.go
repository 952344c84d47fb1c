// Package madecall holds, written anew, loops around a helper of the
// package that may fail before it makes its HTTP call (a request it could
// not dump for a debug log): that failure is no answer of the server, and
// says nothing of what the loop does with one.
package madecall

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httputil"
	"time"
)

type client struct {
	hc    *http.Client
	debug bool
	tries int
}

// do logs the request when debugging, then sends it; it hands back the
// answer whatever its status, and an error only when there is none.
func (c *client) do(req *http.Request) (*http.Response, error) {
	if c.debug {
		dump, err := httputil.DumpRequestOut(req, true)
		if err != nil {
			return nil, err
		}
		log.Printf("%s", dump)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (c *client) exceeded(i int) bool { return i >= c.tries }

// A 429 or a transport error goes round after a constant second, and the
// server's Retry-After is never read; an answer of any other status leaves.
//
// case: flag nojitter retryafter
func (c *client) send(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var res *http.Response
	var err error
	for i := 0; !c.exceeded(i); i++ {
		res, err = c.do(req)
		if err != nil || res.StatusCode == http.StatusTooManyRequests {
			timer := time.NewTimer(time.Second) // want `nojitter: this wait` `retryafter: retry loop retries 429`
			select {
			case <-timer.C:
				continue
			case <-ctx.Done():
				timer.Stop()
			}
		}
		break
	}
	return res, err
}

// Only a transport error goes round, after a wait drawn at random, and
// the caller's context ends it.
//
// case: clean
func (c *client) sendJittered(ctx context.Context, req *http.Request) (*http.Response, error) {
	var res *http.Response
	var err error
	for i := 0; !c.exceeded(i); i++ {
		res, err = c.do(req.WithContext(ctx))
		if err == nil {
			return res, nil
		}
		select {
		case <-time.After(rand.N(time.Second)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return res, err
}

// post sends the request and hands back the answer whatever its status.
func (c *client) post(req *http.Request) (*http.Response, error) {
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Every error of post goes round, at random; post's error is only the
// transport's (a status comes back as an answer, and leaves).
//
// case: clean
func (c *client) postAgain(ctx context.Context, req *http.Request) (*http.Response, error) {
	var err error
	for i := 0; !c.exceeded(i); i++ {
		var res *http.Response
		if res, err = c.post(req.WithContext(ctx)); err == nil {
			return res, nil
		}
		select {
		case <-time.After(rand.N(time.Second)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, err
}

// check sends the request and makes every status outside 2xx an error.
func (c *client) check(req *http.Request) (*http.Response, error) {
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 300 {
		res.Body.Close()
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	return res, nil
}

// Every error of check goes round, a 400 or a 401 as much as a 503, and a
// 429's Retry-After is never read.
//
// case: flag unclassified retryafter
func (c *client) checkAgain(ctx context.Context, req *http.Request) (*http.Response, error) {
	var err error
	for i := 0; !c.exceeded(i); i++ { // want `unclassified: retry loop around client.check retries on every error`
		var res *http.Response
		if res, err = c.check(req.WithContext(ctx)); err == nil {
			return res, nil
		}
		select {
		case <-time.After(rand.N(time.Second)): // want `retryafter: retry loop retries 429 and 503`
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, err
}
