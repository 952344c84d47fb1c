// Package through holds, written anew, the shapes in which a loop's wait
// or classification sits in something it calls: a watch loop that leaves
// only on the caller's cancellation, an attempt helper that makes the call
// and says whether to retry, a wait function picked by a helper, a timer
// function kept in a variable for tests.
package through

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"throughcfg"
)

// source yields a stream of values.
type source interface {
	Next() ([]byte, error)
}

// A watch loop: it goes round on every value; a failure that is not the
// caller's cancellation goes round after a constant second, every watcher
// of the same source in step.
//
// case: flag nojitter
func follow(s source, apply func([]byte)) {
	for {
		v, err := s.Next()
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return
			}
			log.Print(err)
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		apply(v)
	}
}

// The same with the comparison written out, and a jittered wait.
//
// case: clean
func followJittered(s source, apply func([]byte), pause func() time.Duration) {
	for {
		v, err := s.Next()
		if err != nil {
			if err == context.Canceled || err == context.DeadlineExceeded {
				return
			}
			time.Sleep(pause())
			continue
		}
		apply(v)
	}
}

// A watch loop that waits after every value too: a pace, not a retry's
// wait.
//
// case: clean
func followPaced(s source, apply func([]byte)) {
	for {
		v, err := s.Next()
		if err != nil && errors.Is(err, context.Canceled) {
			return
		}
		if err == nil {
			apply(v)
		}
		time.Sleep(time.Second)
	}
}

// post makes one attempt and says whether another may help: a transport
// error, a 5xx or a 429.
func post(hc *http.Client, url string, body []byte) (again bool, err error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		again := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return again, fmt.Errorf("status %d", resp.StatusCode)
	}
	return false, nil
}

// The attempt helper classifies: the loop retries what it says, so it is
// not unclassified; but its 429 goes round after a linear wait with no
// Retry-After read anywhere.
//
// case: flag nojitter retryafter
func upload(hc *http.Client, url string, body []byte) error {
	var last error
	for i := range 3 {
		if i > 0 {
			time.Sleep(500 * time.Millisecond * time.Duration(i)) // want `nojitter: this wait` `retryafter: retry loop retries 429 and 503`
		}
		again, err := post(hc, url, body)
		if err == nil {
			return nil
		}
		last = err
		if !again {
			return err
		}
	}
	return last
}

// postAny says every failure may help.
func postAny(hc *http.Client, req *http.Request) (again bool, err error) {
	resp, err := hc.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return true, fmt.Errorf("status %d", resp.StatusCode)
	}
	return false, nil
}

// The attempt helper retries every failure, 400 and 401 included.
//
// case: flag unclassified nojitter retryafter
func uploadAny(hc *http.Client, url string) error {
	var last error
	for i := range 3 { // want `unclassified: retry loop around postAny retries on every error`
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		again, err := postAny(hc, req)
		if err == nil {
			return nil
		}
		last = err
		if !again {
			return err
		}
		time.Sleep(time.Second << i) // want `nojitter: this wait` `retryafter: retry loop retries 429 and 503`
	}
	return last
}

// client keeps the user's settings.
type client struct {
	hc  *http.Client
	set *throughcfg.Settings
}

// orDoubling is the user's wait function when set, else the settings
// package's own.
func orDoubling(f throughcfg.WaitFunc) throughcfg.WaitFunc {
	if f != nil {
		return f
	}
	return throughcfg.Doubling
}

// The wait function is picked by a helper: by default the settings
// package's doubling, never randomised.
//
// case: flag nojitter
func (c *client) get(url string) (*http.Response, error) {
	wait := orDoubling(c.set.Wait)
	for i := 0; ; i++ {
		resp, err := c.hc.Get(url)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests || i >= c.set.Retries {
			return resp, nil
		}
		resp.Body.Close()
		if d, ok := retryAfter(resp); ok {
			time.Sleep(d)
			continue
		}
		time.Sleep(wait(i)) // want `nojitter: this wait`
	}
}

func retryAfter(resp *http.Response) (time.Duration, bool) {
	s := resp.Header.Get("Retry-After")
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s + "s")
	return d, err == nil
}

// retrier's timer function can be swapped (in tests); the package never
// sets it.
type retrier struct {
	after func(time.Duration) <-chan time.Time
}

// The wait is time.After, held in a variable: a doubling capped at five
// seconds, never randomised.
//
// case: flag nojitter
func (r *retrier) run(ctx context.Context, op func() error) error {
	after := time.After
	if r.after != nil {
		after = r.after
	}
	delay := 100 * time.Millisecond
	for try := 0; try < 8; try++ {
		if err := op(); err == nil {
			return nil
		}
		select {
		case <-after(delay): // want `nojitter: after in a retry loop`
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(delay*2, 5*time.Second)
	}
	return errors.New("gave up")
}

// sender is what a flush hands its payload to.
type sender interface {
	send(p []byte, tries int, pause time.Duration) error
}

type agentSender struct{ hc *http.Client }

// send is called only through sender: its pause is whatever the flush
// passes. Its post goes round on withRetries' bare pause, which is
// reported once, in withRetries.
func (a agentSender) send(p []byte, tries int, pause time.Duration) error {
	return withRetries(tries, pause, func() error {
		_, err := post(a.hc, "http://agent/v1", p)
		return err
	})
}

// The pause is the caller's duration, passed through a method called only
// through an interface, and never randomised.
//
// case: flag nojitter
func withRetries(tries int, pause time.Duration, op func() error) error {
	var err error
	for i := 0; i <= tries; i++ {
		if err = op(); err == nil {
			return nil
		}
		if i < tries {
			time.Sleep(pause) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration whatever its caller passes`
		}
	}
	return err
}

var _ sender = agentSender{}

// The classifier is another package's, read through its fact: 429 and the
// 5xx go round, the rest leave; 429 without Retry-After.
//
// case: flag nojitter retryafter
func fetch(hc *http.Client, url string) (*http.Response, error) {
	for i := 0; i < 4; i++ {
		resp, err := hc.Get(url)
		if err != nil {
			return nil, err
		}
		if !throughcfg.Retryable(resp.StatusCode) {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(time.Second) // want `nojitter: this wait` `retryafter: retry loop retries 429 and 503`
	}
	return nil, errors.New("gave up")
}

// Fault is the client's own error interface.
type Fault interface {
	error
	Code() int
}

type node struct{ addr string }

func (n *node) info(keys ...string) (map[string]string, Fault) { return nil, nil }

// The attempt returns the client's own error interface: every failure
// goes round after a constant wait.
//
// case: flag nojitter
func (n *node) infoWithRetry(tries int, keys ...string) (res map[string]string, err Fault) {
	for i := 0; i < tries; i++ {
		if res, err = n.info(keys...); err == nil {
			return res, nil
		}
		log.Print(err)
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait`
	}
	return nil, err
}
