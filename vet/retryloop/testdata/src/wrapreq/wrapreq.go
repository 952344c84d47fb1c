// Package wrapreq holds, written anew, retry policies of a request
// pipeline whose request type wraps the *http.Request it sends: the
// caller's context is the wrapped request's, reached through a method.
package wrapreq

import (
	"math/rand"
	"net/http"
	"time"
)

// Request is one request on its way down a pipeline.
type Request struct {
	raw  *http.Request
	next func(*http.Request) (*http.Response, error)
}

// Raw returns the request as it will be sent.
func (r *Request) Raw() *http.Request { return r.raw }

// Next sends the request through the rest of the pipeline.
func (r *Request) Next() (*http.Response, error) { return r.next(r.raw) }

// policy retries a request a few times.
type policy struct{ tries int }

// Do retries with full jitter but sleeps without hearing the context the
// wrapped request carries.
//
// case: flag deafwait
func (p *policy) Do(req *Request) (*http.Response, error) { // want Do:`remote=0 waits=true deaf=false jitter=2 durparam=0 retryafter=false bydefault=false`
	for try := 0; ; try++ {
		resp, err := req.Next()
		if err == nil || try == p.tries {
			return resp, err
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second << try)))) // want `deafwait: time.Sleep ignores req.Raw\(\).Context\(\)`
	}
}

// Note is a message with a payload; its Raw method returns the payload.
type Note struct{ body []byte }

// Raw returns the payload.
func (n *Note) Raw() []byte { return n.body }

// resend retries handing a note on; the note carries no context.
//
// case: clean
func (p *policy) resend(n *Note, send func([]byte) error) error {
	var err error
	for try := 0; try <= p.tries; try++ {
		if err = send(n.Raw()); err == nil {
			return nil
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second << try))))
	}
	return err
}

// retryShadowed names a string req inside the loop: the wrapped request
// is out of reach by that name, and no call on it can be written there.
//
// case: clean
func (p *policy) retryShadowed(req *Request, send func(string) error) error {
	var err error
	for try := 0; try <= p.tries; try++ {
		req := "attempt"
		if err = send(req); err == nil {
			return nil
		}
		time.Sleep(time.Duration(rand.Int63n(int64(time.Second << try))))
	}
	return err
}
