// Package picks holds, written anew, the general shapes behind the second
// fresh part's misses and false findings: loops that read the status and
// pick what goes round, and helpers that decide for a loop.
package picks

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"time"
)

// Doer is an HTTP client by its shape.
type Doer interface {
	Do(*http.Request) (*http.Response, error) // want Do:`remote=1 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false`
}

// Client retries through a Doer.
type Client struct {
	next  Doer
	tries int
}

// Every transport error goes round, and among the statuses only the 5xx:
// the loop reads the status and picks, so it has classified.
//
// case: flag deafwait retryafter
func (c *Client) Do(req *http.Request) (*http.Response, error) { // want Do:`remote=1 waits=true deaf=false jitter=2`
	var resp *http.Response
	var err error
	for i := 0; i <= c.tries; i++ {
		resp, err = c.next.Do(req)
		if err != nil {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Second)))) // want `deafwait: time\.Sleep ignores req\.Context\(\)` `retryafter: retry loop retries 503 without reading Retry-After`
			continue
		}
		if resp.StatusCode >= http.StatusInternalServerError {
			resp.Body.Close()
			time.Sleep(time.Duration(rand.Int64N(int64(time.Second)))) // want `deafwait: time\.Sleep ignores req\.Context\(\)`
			continue
		}
		return resp, nil
	}
	return resp, err
}

// Every transport error goes round and so does 404: the status is read,
// but one that will not change is retried with them.
//
// case: flag unclassified deafwait retryafter
func (c *Client) DoNotFound(req *http.Request) (*http.Response, error) { // want DoNotFound:`remote=1 waits=true deaf=false jitter=2`
	for i := 0; i <= c.tries; i++ { // want `unclassified: retry loop around Doer\.Do retries on every error and on 404, which will not change on a retry`
		resp, err := c.next.Do(req)
		if err == nil && resp.StatusCode != http.StatusNotFound && resp.StatusCode < 500 {
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second)))) // want `deafwait: time\.Sleep ignores req\.Context\(\)` `retryafter: retry loop retries 503 without reading Retry-After`
	}
	return nil, errors.New("gave up")
}

var retryOn = map[int]bool{429: true, 500: true, 502: true, 503: true, 504: true}

// The set is tested by a comma-ok lookup: the statuses in it go round,
// the rest leave; the wait grows with the count and nothing randomises it.
//
// case: flag nojitter retryafter
func commaOkSet(c *http.Client, url string, tries int) (*http.Response, error) {
	var resp *http.Response
	var err error
	for i := 0; i < tries; i++ {
		resp, err = c.Get(url)
		if err != nil {
			return nil, err
		}
		if _, ok := retryOn[resp.StatusCode]; ok {
			resp.Body.Close()
			time.Sleep(time.Duration(i+1) * 500 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
			continue
		}
		return resp, nil
	}
	return resp, err
}

func retryable(code int) bool {
	_, ok := retryOn[code]
	return ok
}

// The same set, read by a classifier of the package.
//
// case: flag nojitter retryafter
func commaOkClassifier(c *http.Client, url string, tries int) (*http.Response, error) {
	for i := 0; i < tries; i++ {
		resp, err := c.Get(url)
		if err != nil {
			return nil, err
		}
		if !retryable(resp.StatusCode) {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(time.Duration(i+1) * 500 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 429 and 503 without reading Retry-After`
	}
	return nil, errors.New("gave up")
}

func problemDoc(resp *http.Response) bool {
	return resp.Header.Get("Content-Type") == "application/problem+json"
}

// A 5xx goes round only when its body is a problem document, a check the
// analyzer does not see into; a 4xx leaves: the status is read.
//
// case: flag nojitter
func problem5xx(c *http.Client, url string) (*http.Response, error) {
	var err error
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(250 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		}
		var resp *http.Response
		resp, err = c.Get(url)
		if err != nil {
			continue
		}
		switch {
		case resp.StatusCode < 300:
			return resp, nil
		case resp.StatusCode >= 500:
			if problemDoc(resp) {
				resp.Body.Close()
				err = errors.New(resp.Status)
				continue
			}
		}
		return resp, errors.New(resp.Status)
	}
	return nil, err
}

// Router keeps its sleep in a field so that tests can swap it.
type Router struct {
	sleep func(time.Duration)
	fetch func(context.Context) (int, error)
}

// NewRouter gives the field time.Sleep.
func NewRouter(fetch func(context.Context) (int, error)) *Router {
	return &Router{sleep: time.Sleep, fetch: fetch}
}

// The field's only value is time.Sleep: the wait cannot hear ctx.
//
// case: flag deafwait
func (r *Router) Writers(ctx context.Context) (int, error) { // want Writers:`remote=0 waits=true deaf=false jitter=1`
	for i := 0; i < 100; i++ {
		n, err := r.fetch(ctx)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			return n, nil
		}
		r.sleep(100 * time.Millisecond) // want `deafwait: r\.sleep waits with time\.Sleep and cannot hear ctx`
	}
	return 0, errors.New("no writers")
}

// The select hears ctx whenever it can be cancelled; the sleep after the
// if runs only for a context with no Done channel, with nothing to hear.
//
// case: clean
func sleepWhenNoDone(ctx context.Context, op func() error, next func() time.Duration) error {
	for i := 0; i < 5; i++ {
		err := op()
		if err == nil {
			return nil
		}
		if done := ctx.Done(); done != nil {
			t := time.NewTimer(next())
			select {
			case <-done:
				t.Stop()
				return err
			case <-t.C:
				continue
			}
		}
		time.Sleep(next())
	}
	return errors.New("gave up")
}

// The select's first case only breaks out of the select: the sleep after
// it runs with a cancellable context too.
//
// case: flag deafwait
func sleepAfterBreak(ctx context.Context, op func() error, next func() time.Duration) error {
	for i := 0; i < 5; i++ {
		err := op()
		if err == nil {
			return nil
		}
		if ctx.Done() != nil {
			select {
			case <-ctx.Done():
				break
			default:
				continue
			}
		}
		time.Sleep(next()) // want `deafwait: time\.Sleep ignores ctx`
	}
	return errors.New("gave up")
}

// APIError is the error a call of this package returns for a non-2xx.
type APIError struct {
	StatusCode int
	Reason     string
}

func (e *APIError) Error() string { return e.Reason }

// Exec makes the HTTP call and turns a non-2xx status into an *APIError.
func Exec(ctx context.Context, c *http.Client, url string) error { // want Exec:`remote=1 waits=false`
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return &APIError{StatusCode: resp.StatusCode, Reason: resp.Header.Get("X-Reason")}
	}
	return nil
}

// Only a 404 whose reason says "not processed yet" goes round: the type
// assertion finds the status as errors.As would, and the reason is what
// the server said. The wait doubles with nothing random in it.
//
// case: flag nojitter
func awaitProcessed(ctx context.Context, c *http.Client, url string, max int) error {
	for i := 0; ; i++ {
		err := Exec(ctx, c, url)
		if err == nil {
			return nil
		}
		apiErr, ok := err.(*APIError)
		if !ok || apiErr.StatusCode != http.StatusNotFound || apiErr.Reason != "NotProcessed" || i >= max {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond << i): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		}
	}
}

// The same assertion with no reason read: 404 goes round, and 404 will
// not change.
//
// case: flag unclassified nojitter
func awaitAny404(ctx context.Context, c *http.Client, url string, max int) error {
	for i := 0; ; i++ { // want `unclassified: retry loop around Exec retries on 404, which will not change on a retry`
		err := Exec(ctx, c, url)
		if err == nil {
			return nil
		}
		apiErr, ok := err.(*APIError)
		if !ok || apiErr.StatusCode != http.StatusNotFound || i >= max {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond << i): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		}
	}
}

// Policy says whether to retry an error and how long to wait first.
type Policy func(err error) (bool, time.Duration)

// Retrier retries through the policy its user gives.
type Retrier struct {
	call   func(context.Context) error
	policy Policy
}

// NewRetrier keeps the user's policy.
func NewRetrier(call func(context.Context) error, p Policy) *Retrier {
	return &Retrier{call: call, policy: p}
}

// The policy decides both whether and when, out of sight: it may count
// the attempts, so the loop is not unbounded; its sleep is deaf to ctx.
//
// case: flag deafwait
func (r *Retrier) Run(ctx context.Context) error { // want Run:`remote=0 waits=true deaf=false jitter=0`
	for {
		err := r.call(ctx)
		if err == nil {
			return nil
		}
		if again, d := r.policy(err); again {
			time.Sleep(d) // want `deafwait: time\.Sleep ignores ctx`
			continue
		}
		return err
	}
}

// A classifier handed only the error says nothing of how many times: the
// loop retries what it calls retryable forever.
//
// case: flag unbounded deafwait
func (r *Retrier) RunForever(ctx context.Context, retryable func(error) bool) error { // want RunForever:`remote=0 waits=true deaf=false jitter=2`
	for { // want `unbounded: retry loop has no bound on attempts or total time`
		err := r.call(ctx)
		if err == nil {
			return nil
		}
		if !retryable(err) {
			return err
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second)))) // want `deafwait: time\.Sleep ignores ctx`
	}
}

func createLock(name string) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// A lock file another process holds, polled through a helper of the
// package that only touches the file system: nothing shared to
// desynchronise, so a constant wait is fine.
//
// case: clean
func obtainLock(ctx context.Context, name string) error {
	for {
		err := createLock(name)
		if err == nil {
			return nil
		}
		if !os.IsExist(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// The same poll through a helper that asks a server: a retry loop.
//
// case: flag nojitter
func obtainRemoteLock(ctx context.Context, c *http.Client, url string) error {
	for {
		err := Exec(ctx, c, url)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrExist) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
		}
	}
}
