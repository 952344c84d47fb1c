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

	"example.com/pb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"tries"
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

// codeOf is the gRPC code an error carries, as a codebase's own wrapper of
// status.Code.
func codeOf(err error) codes.Code { return status.Code(err) }

// A wait for a daemon to come up: only Unavailable goes round, every
// other code ends the loop, one of them as success.
//
// case: flag nojitter
func waitUp(ctx context.Context, c pb.GreeterClient) error {
	for {
		_, err := c.SayHello(ctx, &pb.HelloRequest{Name: "ping"})
		if err == nil {
			return nil
		}
		switch code := codeOf(err); code {
		case codes.Unavailable:
		case codes.Unimplemented:
			return nil // an old daemon that answered
		default:
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
		}
	}
}

// The same wait that goes round on every code, PermissionDenied included.
//
// case: flag unclassified nojitter
func waitUpAnyCode(ctx context.Context, c pb.GreeterClient) error {
	for { // want `unclassified: retry loop around GreeterClient.SayHello retries on every error`
		_, err := c.SayHello(ctx, &pb.HelloRequest{Name: "ping"})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
		}
	}
}

// signer is a client whose call signs each request with a token it
// refreshes on its own schedule; its error may carry the answer's status.
type signer struct{ hc *http.Client }

// call gets url, signed, and makes any status but a 2xx its error too.
func (s *signer) call(url string) (*http.Response, error) {
	resp, err := s.hc.Get(url)
	if err == nil && resp.StatusCode >= 300 {
		return resp, errors.New(resp.Status)
	}
	return resp, err
}

// Re-sent only when the answer was a 401, since the token may have been
// renewed meanwhile: a re-sign, not a retry of a failure.
//
// case: clean
func (s *signer) send(url string) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		resp, err = s.call(url)
		if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			return resp, err
		}
		time.Sleep(time.Second)
	}
	return resp, err
}

// Re-sent on a 401 and on a 403, which no refresh will change.
//
// case: flag unclassified nojitter
func (s *signer) sendForbidden(url string) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < 3; attempt++ { // want `unclassified: retry loop around signer.call retries on 401, 403, which will not change`
		resp, err = s.call(url)
		if resp == nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			return resp, err
		}
		time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
	}
	return resp, err
}

// A token exchange that reads the answer's status: a 4xx is returned, and
// only a 5xx or a failed connection goes round — a 503 among them, whose
// Retry-After nothing reads (call makes every status from 300 an error).
//
// case: flag nojitter retryafter
func (s *signer) exchange(url string) (*http.Response, error) {
	var resp *http.Response
	var err error
	for retry := 0; retry < 3; retry++ {
		if resp, err = s.call(url); err == nil {
			break
		}
		if resp != nil && resp.StatusCode >= 400 && resp.StatusCode <= 499 {
			return nil, err
		}
		time.Sleep(time.Duration(1<<retry) * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503 without reading Retry-After`
	}
	return resp, err
}

// The same exchange that never reads the status: every error, a 400
// made an error by call included, goes round, and so do a 429 and a 503
// without their Retry-After.
//
// case: flag unclassified nojitter retryafter
func (s *signer) exchangeBlind(url string) (*http.Response, error) {
	var resp *http.Response
	var err error
	for retry := 0; retry < 3; retry++ { // want `unclassified: retry loop around signer.call retries on every error`
		if resp, err = s.call(url); err == nil {
			break
		}
		time.Sleep(time.Duration(1<<retry) * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
	}
	return resp, err
}

// pusher ships batches to a log store.
type pusher struct {
	hc  *http.Client
	url string
}

// push posts one batch and hands back the answer's status beside its
// error: -1 when no answer came.
func (p *pusher) push(ctx context.Context, batch []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(batch))
	if err != nil {
		return -1, err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return -1, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, errors.New(resp.Status)
	}
	return resp.StatusCode, nil
}

// Only a failed connection, a 429 and a 5xx go round: the status the
// helper handed back is read.
//
// case: flag retryafter
func (p *pusher) ship(ctx context.Context, batch []byte) error {
	var err error
	for tries := 0; tries < 10; tries++ {
		var status int
		status, err = p.push(ctx, batch)
		if err == nil {
			return nil
		}
		if status > 0 && status != http.StatusTooManyRequests && status/100 != 5 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(time.Duration(tries+1) * time.Second)): // want `retryafter: retry loop retries 429 and 503`
		}
	}
	return err
}

// The same shipper that never looks at the status: a 400 goes round too.
//
// case: flag unclassified retryafter
func (p *pusher) shipBlind(ctx context.Context, batch []byte) error {
	var err error
	for tries := 0; tries < 10; tries++ { // want `unclassified: retry loop around pusher.push retries on every error`
		_, err = p.push(ctx, batch)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(time.Duration(tries+1) * time.Second)): // want `retryafter: retry loop retries 429 and 503`
		}
	}
	return err
}

// The shipper on a Backoff that counts its tries and hears ctx: Ongoing is
// the bound.
//
// case: flag retryafter
func (p *pusher) shipOngoing(batch []byte) error {
	ctx := context.Background()
	b := tries.New(ctx, 10)
	var err error
	for b.Ongoing() {
		var status int
		status, err = p.push(ctx, batch)
		if err == nil {
			return nil
		}
		if status > 0 && status != http.StatusTooManyRequests && status/100 != 5 {
			break
		}
		b.Wait() // want `retryafter: retry loop retries 429 and 503`
	}
	return err
}

// The same loop on a method that neither counts nor hears a context.
//
// case: flag unbounded retryafter
func (p *pusher) shipWhileSlow(batch []byte) error {
	b := tries.New(context.Background(), 10)
	var err error
	for !b.Slow() { // want `unbounded: retry loop has no bound`
		var status int
		status, err = p.push(context.Background(), batch)
		if err == nil {
			return nil
		}
		if status > 0 && status != http.StatusTooManyRequests && status/100 != 5 {
			break
		}
		b.Wait() // want `retryafter: retry loop retries 429 and 503`
	}
	return err
}

type token struct{ value string }

// grantOnce asks for a token once and hands back the answer's status
// second, beside the Retry-After it named.
func (p *pusher) grantOnce(ctx context.Context) (token, int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://auth.example/token", nil)
	if err != nil {
		return token{}, 0, "", err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return token{}, 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return token{}, resp.StatusCode, resp.Header.Get("Retry-After"), errors.New(resp.Status)
	}
	return token{value: "t"}, resp.StatusCode, "", nil
}

// transientStatus says which answers are worth asking again.
func transientStatus(s int) bool {
	return s == http.StatusTooManyRequests || s >= http.StatusInternalServerError
}

// grant goes round on a transient status, read from the helper's second
// result, or when no answer came, after a jittered wait; a rejected
// credential returns at once.
//
// case: clean
func (p *pusher) grant(ctx context.Context) (token, error) {
	var last error
	for a := range 3 {
		t, status, retryAfter, err := p.grantOnce(ctx)
		if err == nil {
			return t, nil
		}
		last = err
		wait := time.Duration(rand.Int64N(int64(time.Second << a)))
		switch {
		case status != 0 && transientStatus(status):
			if d, perr := time.ParseDuration(retryAfter + "s"); perr == nil {
				wait = d
			}
		case status == 0:
		default:
			return token{}, err
		}
		select {
		case <-ctx.Done():
			return token{}, ctx.Err()
		case <-time.After(wait):
		}
	}
	return token{}, last
}
