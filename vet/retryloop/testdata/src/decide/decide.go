// Package decide holds retry loops whose way out is decided by something
// the loop hands its count, its context or its error to, and a flag that
// keeps a bound. Written for these tests.
package decide

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"example.com/retrypolicy"
)

// Policy says whether to try again after the n-th failure, and after how
// long.
type Policy interface {
	Again(ctx context.Context, n int, err error) (time.Duration, bool, error)
}

// case: flag deafwait
func withPolicy(ctx context.Context, c *http.Client, req *http.Request, p Policy) (*http.Response, error) {
	n := 0
	for {
		resp, err := c.Do(req.WithContext(ctx))
		if err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
			err = errors.New(resp.Status)
		}
		n++
		d, again, perr := p.Again(ctx, n, err)
		if perr != nil {
			return nil, perr
		}
		if !again {
			return nil, err
		}
		time.Sleep(d) // want `deafwait: time\.Sleep ignores ctx`
	}
}

// Stepper gives the wait before the n-th retry, and whether to retry.
type Stepper interface {
	Step(n int) (time.Duration, bool)
}

// case: clean
func untilStepperStops(op func() error, s Stepper) error {
	var n int
	for {
		err := op()
		if err == nil {
			return nil
		}
		n++
		d, more := s.Step(n)
		if !more {
			return err
		}
		time.Sleep(d)
	}
}

// case: clean
func callbackStops(op func() error, onFail func(error) error) error {
	for {
		err := op()
		if err == nil {
			return nil
		}
		if err := onFail(err); err != nil {
			return err
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
	}
}

// case: flag nojitter
func flagBound(op func() error) error {
	tries := 0
	const limit = 5
	for {
		err := op()
		if err == nil {
			return nil
		}
		giveUp := tries >= limit
		if giveUp {
			return err
		}
		time.Sleep(2 * time.Second) // want `nojitter: this wait`
		tries++
	}
}

var errFatal = errors.New("fatal")

// case: flag unbounded
func classifiedForever(op func() error, retryable func(error) bool) error {
	// The callback only says which errors to retry: a retryable one is
	// retried forever.
	for { // want `unbounded: retry loop has no bound`
		err := op()
		if err == nil {
			return nil
		}
		if errors.Is(err, errFatal) || !retryable(err) {
			return err
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
	}
}

// withRuntime goes on while the SDK's runtime says so, handing it a
// context rebuilt each round with the attempts made: the way out is
// decided out of sight, and counts.
//
// case: clean
func withRuntime(c *http.Client, url string, o *retrypolicy.Options) (*http.Response, error) {
	n := 0
	pctx := &retrypolicy.Context{Attempts: n}
	var last error
	for retrypolicy.ShouldRetry(o, pctx) {
		time.Sleep(retrypolicy.Delay(pctx))
		resp, err := c.Get(url)
		if err != nil {
			last = err
			n++
			pctx = &retrypolicy.Context{Attempts: n, Err: err}
			continue
		}
		return resp, nil
	}
	return nil, last
}
