// Package recurstatus holds, written anew, retries by recursion that go
// round on an HTTP status rather than on an error: a function that sends
// its request, reads the status and, on a busy backend, waits and calls
// itself again with the attempt counted.
package recurstatus

import (
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// API is a cloud vendor's client.
type API struct {
	client *http.Client
	base   string
}

var errTimeout = errors.New("timeout reached")

// A busy backend (503) asked again after the same pause every time, the
// server's Retry-After never read.
//
// case: flag nojitter retryafter
func (a *API) readConfig(id, attempt, sleep, timeout int) (*http.Response, error) {
	resp, err := a.client.Get(fmt.Sprintf("%s/instances/%d/config", a.base, id))
	if err != nil {
		return nil, err
	}
	if attempt*sleep > timeout {
		return nil, errTimeout
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp, nil
	case http.StatusServiceUnavailable:
		resp.Body.Close()
		time.Sleep(time.Duration(sleep) * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503 without reading Retry-After`
		return a.readConfig(id, attempt+1, sleep, timeout)
	}
	resp.Body.Close()
	return nil, fmt.Errorf("read config: status %d", resp.StatusCode)
}

// The same read waiting what the server said.
//
// case: clean
func (a *API) readConfigHeard(id, attempt, timeout int) (*http.Response, error) {
	resp, err := a.client.Get(fmt.Sprintf("%s/instances/%d/config", a.base, id))
	if err != nil {
		return nil, err
	}
	if attempt > timeout {
		return nil, errTimeout
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp, nil
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		resp.Body.Close()
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil {
			secs = 1 + rand.IntN(5)
		}
		time.Sleep(time.Duration(secs) * time.Second)
		return a.readConfigHeard(id, attempt+secs, timeout)
	}
	resp.Body.Close()
	return nil, fmt.Errorf("read config: status %d", resp.StatusCode)
}

// A conflict (409, the resource busy) asked again after a jittered pause:
// no Retry-After to read on a 409.
//
// case: clean
func (a *API) resizeDisk(id, attempt int) error {
	resp, err := a.client.Post(fmt.Sprintf("%s/instances/%d/disk", a.base, id), "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusConflict && attempt < 5 {
		time.Sleep(rand.N(2 * time.Second))
		return a.resizeDisk(id, attempt+1)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("resize: status %d", resp.StatusCode)
	}
	return nil
}

// The same conflict asked again after a constant pause.
//
// case: flag nojitter
func (a *API) resizeDiskFixed(id, attempt int) error {
	resp, err := a.client.Post(fmt.Sprintf("%s/instances/%d/disk", a.base, id), "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusConflict && attempt < 5 {
		time.Sleep(2 * time.Second) // want `nojitter: this wait in a retry loop`
		return a.resizeDiskFixed(id, attempt+1)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("resize: status %d", resp.StatusCode)
	}
	return nil
}

// Every 5xx asked again on a doubling pause, bounded by the attempt.
//
// case: flag nojitter retryafter
func (a *API) deleteNode(id, attempt int) error {
	req, err := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/nodes/%d", a.base, id), nil)
	if err != nil {
		return err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 && attempt < 4 {
		time.Sleep(time.Second << attempt) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503 without reading Retry-After`
		return a.deleteNode(id, attempt+1)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("delete: status %d", resp.StatusCode)
	}
	return nil
}

// Pages listed by recursion at a steady pace after each 200: the next
// page asked for, nothing failed sent again.
//
// case: clean
func (a *API) listPages(page int, seen []int) ([]int, error) {
	resp, err := a.client.Get(fmt.Sprintf("%s/nodes?page=%d", a.base, page))
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		if page >= 10 {
			return seen, nil
		}
		time.Sleep(100 * time.Millisecond)
		return a.listPages(page+1, append(seen, page))
	}
	return nil, fmt.Errorf("list: status %d", resp.StatusCode)
}

// Provider is an SDK's client: a budget of throttled retries kept on it.
type Provider struct {
	HTTP        *http.Client
	BackoffLeft *int
	Backoff     time.Duration
}

// Opts are one request's options: its own budget of gateway retries.
type Opts struct {
	RetryCount *int
}

// A 429 sent again after the client's constant backoff while its budget
// lasts, the budget run down on the client; a 502 while the request's
// own lasts. Bounded by both, but the server's Retry-After never read.
//
// case: flag nojitter retryafter
func (p *Provider) request(method, url string, opts *Opts) (*http.Response, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		if *p.BackoffLeft > 0 {
			*p.BackoffLeft -= 1
			resp.Body.Close()
			time.Sleep(60 * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 without reading Retry-After`
			return p.request(method, url, opts)
		}
	case http.StatusBadGateway:
		if *opts.RetryCount > 0 {
			*opts.RetryCount--
			resp.Body.Close()
			time.Sleep(rand.N(time.Second))
			return p.request(method, url, opts)
		}
	}
	return resp, nil
}

// The same 429 sent again with nothing run down: while the server says
// no, the client asks again every minute, a stack frame more each time.
//
// case: flag nojitter retryafter unbounded
func (p *Provider) requestForever(method, url string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		resp.Body.Close()
		time.Sleep(60 * time.Second)         // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 without reading Retry-After`
		return p.requestForever(method, url) // want `unbounded: retry by recursion has no bound`
	}
	return resp, nil
}

// A busy backend read again by recursion with its attempt counted, but
// the count only logged: nothing compares it, so a backend that stays
// busy is asked forever, a stack frame more each time.
//
// case: flag nojitter retryafter unbounded
func (a *API) readStatus(id, attempt, sleep int) (*http.Response, error) {
	resp, err := a.client.Get(fmt.Sprintf("%s/instances/%d/status", a.base, id))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		resp.Body.Close()
		log.Printf("busy, attempt %d", attempt)
		attempt++
		time.Sleep(time.Duration(sleep) * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 503 without reading Retry-After`
		return a.readStatus(id, attempt, sleep)        // want `unbounded: retry by recursion has no bound`
	}
	return resp, nil
}
