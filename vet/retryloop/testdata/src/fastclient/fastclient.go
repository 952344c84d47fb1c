// Package fastclient holds, written anew, retry loops around fasthttp's
// client: one that goes round on every answer but a 200, one whose helper
// turns a 503 into an error of its own, and one that retries only a
// gateway's failures.
package fastclient

import (
	"errors"
	"math/rand"
	"time"

	"github.com/valyala/fasthttp"
)

var errUnavailable = errors.New("service unavailable")

// fetchAll goes round on a transport error and on every status but 200,
// a 404 or a 429 alike, after a constant second.
//
// case: flag unclassified nojitter retryafter
func fetchAll(c *fasthttp.Client, uri string) ([]byte, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(uri)
	for i := 0; i < 3; i++ { // want `unclassified: retry loop around Client.DoTimeout retries on every error`
		err := c.DoTimeout(req, resp, 5*time.Second)
		if err == nil && resp.StatusCode() == 200 {
			return resp.Body(), nil
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
	return nil, errors.New("no answer")
}

func get(c *fasthttp.Client, uri string) ([]byte, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(uri)
	if err := c.Do(req, resp); err != nil {
		return nil, err
	}
	switch resp.StatusCode() {
	case 200:
		return resp.Body(), nil
	case 503:
		return nil, errUnavailable
	}
	return nil, errors.New("unexpected status")
}

// fetchUnavailable retries only the helper's 503, on a jittered pause,
// never reading when the server asked to come back.
//
// case: flag retryafter
func fetchUnavailable(c *fasthttp.Client, uri string) ([]byte, error) {
	for i := 0; ; i++ {
		body, err := get(c, uri)
		if !errors.Is(err, errUnavailable) || i == 4 {
			return body, err
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second << i)))) // want `retryafter: retry loop retries 503`
	}
}

// fetchGateway retries a 502 or 504 only, on a jittered pause: nothing
// a server asks to wait for.
//
// case: clean
func fetchGateway(c *fasthttp.Client, uri string) ([]byte, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(uri)
	for i := 0; ; i++ {
		err := c.Do(req, resp)
		if err != nil {
			return nil, err
		}
		if st := resp.StatusCode(); (st != 502 && st != 504) || i == 4 {
			return resp.Body(), nil
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second << i))))
	}
}
