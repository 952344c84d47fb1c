// Package shapes holds retry shapes found in published code, written anew:
// configuration defaults set in a constructor, func fields left unset,
// attempts that say whether to retry, watch loops, error-text
// classification, contexts with nothing to cancel, readiness polls.
package shapes

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// Config is a client's configuration; NewConfig gives its defaults.
type Config struct {
	Backoff     time.Duration // want Backoff:"setting kind=1 bydefault=true caller=false"
	BackoffFunc func(retries, max int) time.Duration
	Max         int
}

// NewConfig returns the defaults.
func NewConfig() *Config {
	c := &Config{Max: 3}
	c.Backoff = 100 * time.Millisecond
	return c
}

type client struct{ conf *Config }

func (c *client) backoff(retries int) time.Duration {
	if c.conf.BackoffFunc != nil {
		return c.conf.BackoffFunc(retries, c.conf.Max)
	}
	return c.conf.Backoff
}

// case: flag nojitter
func (c *client) retryOnError(retryable func(error) bool, fn func() error) error {
	for left := c.conf.Max + 1; ; {
		err := fn()
		left--
		if err == nil || left <= 0 || !retryable(err) {
			return err
		}
		time.Sleep(c.conf.Backoff) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
	}
}

// case: flag nojitter
func (c *client) endTxn(run func() (bool, error)) error {
	var err error
	for left := c.conf.Max; left >= 0; left-- {
		var retry bool
		retry, err = run()
		if !retry {
			return err
		}
		time.Sleep(c.backoff(left)) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
	}
	return err
}

// case: flag nojitter
func (c *client) watch(stop <-chan struct{}, next func() (string, error), handle func(string)) {
	failures := 0
	for {
		select {
		case <-stop:
			return
		default:
		}
		v, err := next()
		if err != nil {
			failures++
			time.Sleep(time.Second * time.Duration(failures)) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
			continue
		}
		failures = 0
		handle(v)
	}
}

// case: clean
func byErrorText(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	for attempt := 0; attempt < 3; attempt++ {
		resp, err := hc.Do(req.WithContext(ctx))
		if err == nil {
			return resp, nil
		}
		if !strings.Contains(err.Error(), "connection reset") {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(rand.N(time.Second)):
		}
	}
	return nil, errors.New("gave up")
}

// case: clean
func nothingToCancel(ctx context.Context, d time.Duration) {
	if ctx == nil || ctx.Done() == nil {
		time.Sleep(d)
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// case: clean
func readiness(ctx context.Context) error {
	for i := 0; i < 50; i++ {
		resp, err := http.Get("http://localhost:8080/healthz")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return errors.New("never ready")
}

// case: flag deafwait
func pollJob(ctx context.Context, status func(context.Context) (string, error)) error {
	for {
		s, err := status(ctx)
		if err != nil {
			return err
		}
		if s == "done" {
			return nil
		}
		time.Sleep(time.Second) // want `deafwait: time\.Sleep ignores ctx`
	}
}

// attempts yields n attempts, a second apart.
func attempts(n int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
			time.Sleep(time.Second)
		}
	}
}

// case: flag nojitter
func rangeOverAttempts(try func() error) error {
	var err error
	for range attempts(3) { // want `nojitter: attempts in a retry loop has a constant`
		if err = try(); err == nil {
			return nil
		}
	}
	return err
}
