// Package classify holds, written anew, loops that classify their
// failures in ways other than naming transient statuses: by retrying
// only what never reached the server.
package classify

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// A JSON-RPC post that goes round only when no answer came: any response,
// whatever its status, is the caller's to read.
//
// case: clean
func postRPC(ctx context.Context, hc *http.Client, url string, body []byte, tries int) (*http.Response, error) {
	var err error
	for i := 0; i < tries; i++ {
		req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if rerr != nil {
			return nil, rerr
		}
		var resp *http.Response
		resp, err = hc.Do(req)
		if err == nil {
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Duration(i+1) * time.Second)):
		}
	}
	return nil, err
}

// The same post that also goes round on every answer but a 200, a 400
// and a 401 included, a 429 and a 503 with no look at Retry-After.
//
// case: flag unclassified retryafter
func postRPCUntilOK(ctx context.Context, hc *http.Client, url string, body []byte, tries int) (*http.Response, error) {
	for i := 0; i < tries; i++ { // want `unclassified: retry loop around Client\.Do retries on every error and on every non-2xx status`
		req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if rerr != nil {
			return nil, rerr
		}
		resp, err := hc.Do(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Duration(i+1) * time.Second)): // want `retryafter: retry loop retries 429 and 503`
		}
	}
	return nil, errors.New("no answer")
}
