// Package ginctx holds, written anew, handlers of a web framework whose
// context keeps the request in a field (as gin's does), or embeds one
// that does, and a gateway's request that keeps the client's in a field
// of another name: the request's context is the caller's, in scope.
package ginctx

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// Ctx is a framework's handler context: the request in a field.
type Ctx struct {
	Request *http.Request
	Keys    map[string]any
}

// WebCtx is an application's context embedding the framework's.
type WebCtx struct {
	*Ctx
	UserID int64
}

// Job is a value that happens to keep a request it never sends.
type Job struct {
	Request *http.Request
	Tries   int
}

var errFailed = errors.New("prediction failed")

type prediction struct {
	Status string `json:"status"`
}

func getPrediction(c *Ctx, url string) (prediction, error) {
	var p prediction
	req, err := http.NewRequestWithContext(c.Request.Context(), http.MethodGet, url, nil)
	if err != nil {
		return p, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&p)
	return p, err
}

// A prediction polled every 3 s with the handler's request in scope:
// the client that asked has gone, the handler sleeps on.
//
// case: flag deafwait
func pollPrediction(c *Ctx, url string) error {
	for {
		p, err := getPrediction(c, url)
		if err != nil {
			return err
		}
		switch p.Status {
		case "succeeded":
			return nil
		case "failed", "canceled":
			return errFailed
		}
		time.Sleep(3 * time.Second) // want `deafwait: time.Sleep ignores c.Request.Context\(\)`
	}
}

// The same poll heard through the request's context.
//
// case: clean
func pollPredictionHeard(c *Ctx, url string) error {
	for {
		p, err := getPrediction(c, url)
		if err != nil {
			return err
		}
		switch p.Status {
		case "succeeded":
			return nil
		case "failed", "canceled":
			return errFailed
		}
		select {
		case <-c.Request.Context().Done():
			return c.Request.Context().Err()
		case <-time.After(3 * time.Second):
		}
	}
}

// Settings saved up to three times through an application context that
// embeds the framework's: the request's context, promoted, is in scope.
//
// case: flag deafwait
func saveSettings(c *WebCtx, save func() error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = save(); err == nil {
			return nil
		}
		time.Sleep(rand.N(100 * time.Millisecond)) // want `deafwait: time.Sleep ignores c.Request.Context\(\)`
	}
	return err
}

// A job's request kept for later, not one this function was handed to
// serve: still, the request carries its caller's context, in scope.
//
// case: flag deafwait
func runJob(j *Job, run func() error) error {
	var err error
	for attempt := 0; attempt < j.Tries; attempt++ {
		if err = run(); err == nil {
			return nil
		}
		time.Sleep(rand.N(time.Second)) // want `deafwait: time.Sleep ignores j.Request.Context\(\)`
	}
	return err
}

// A request built here and kept in a local value: no caller's context
// was handed in, nothing to hear.
//
// case: clean
func runLocal(url string, run func(*Job) error) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	j := &Job{Request: req}
	for attempt := 0; attempt < 3; attempt++ {
		if err = run(j); err == nil {
			return nil
		}
		time.Sleep(rand.N(time.Second))
	}
	return err
}

// Proxied is a gateway's request: the client's request, forwarded.
type Proxied struct {
	Forwarded *http.Request
	Target    string
}

// Wrapped embeds the request it sends, as a retrying client's does.
type Wrapped struct {
	*http.Request
	Body []byte
}

// The upstream asked again after a jittered wait that does not hear the
// client who sent the request, gone or not.
//
// case: flag deafwait
func forward(p *Proxied, send func(string) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = send(p.Target); err == nil {
			return nil
		}
		time.Sleep(rand.N(time.Second)) // want `deafwait: time.Sleep ignores p.Forwarded.Context\(\)`
	}
	return err
}

// A wrapped request sent again after a wait that hears its context.
//
// case: clean
func sendWrapped(r *Wrapped, send func(*http.Request) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = send(r.Request); err == nil {
			return nil
		}
		select {
		case <-r.Context().Done():
			return r.Context().Err()
		case <-time.After(rand.N(time.Second)):
		}
	}
	return err
}

// The same request sent again after a sleep that does not.
//
// case: flag deafwait
func sendWrappedDeaf(r *Wrapped, send func(*http.Request) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = send(r.Request); err == nil {
			return nil
		}
		time.Sleep(rand.N(time.Second)) // want `deafwait: time.Sleep ignores r.Request.Context\(\)`
	}
	return err
}
