// Package statuswrapper holds, written anew, an SDK's retry helper that is
// handed each request as a function answering with the SDK's own response
// (the status kept as HTTPStatus beside the decoded body), and decides by
// that status.
package statuswrapper

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// answer is the SDK's response: the status and the decoded body.
type answer struct {
	HTTPStatus int
	Fields     map[string]string
}

type sdk struct {
	hc   *http.Client
	base string
}

// post sends one form and answers with the SDK's response.
func (s *sdk) post(ctx context.Context, path string) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return &answer{HTTPStatus: resp.StatusCode}, nil
}

// transient is the SDK's classifier: 429 and every 5xx go round.
func transient(a *answer) bool {
	return a.HTTPStatus == http.StatusTooManyRequests || a.HTTPStatus >= 500
}

// gateway retries only a bad gateway or a gateway timeout.
func gateway(a *answer) bool {
	return a.HTTPStatus == http.StatusBadGateway || a.HTTPStatus == http.StatusGatewayTimeout
}

// A 429 or 503 goes round on the helper's own jittered schedule, and
// nothing reads Retry-After.
//
// case: flag retryafter
func withRetries(ctx context.Context, attempts int, do func() (*answer, error)) (*answer, error) {
	var last *answer
	var err error
	for i := range attempts {
		last, err = do()
		if err == nil && !transient(last) {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second << i)): // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
		}
	}
	return last, err
}

// The same helper retrying only 502 and 504: a 429 or 503 is handed back.
//
// case: clean
func withGatewayRetries(ctx context.Context, attempts int, do func() (*answer, error)) (*answer, error) {
	var last *answer
	var err error
	for i := range attempts {
		last, err = do()
		if err == nil && !gateway(last) {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second << i)):
		}
	}
	return last, err
}

// Recognize is the SDK's entry point: each attempt one POST.
func (s *sdk) Recognize(ctx context.Context) (*answer, error) { // want Recognize:`remote=0 waits=true deaf=false jitter=2 durparam=0 retryafter=false bydefault=false`
	return withRetries(ctx, 3, func() (*answer, error) {
		return s.post(ctx, "/recognize")
	})
}

// Lookup is another: each attempt one POST.
func (s *sdk) Lookup(ctx context.Context) (*answer, error) { // want Lookup:`remote=0 waits=true deaf=false jitter=2 durparam=0 retryafter=false bydefault=false`
	return withGatewayRetries(ctx, 3, func() (*answer, error) {
		return s.post(ctx, "/lookup")
	})
}
