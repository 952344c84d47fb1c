package selfverdict

import (
	"errors"
	"math/rand"
	"net/http"
	"time"
)

// Strategy says how long to wait before try n.
type Strategy func(n int) time.Duration

// Client retries GETs on the schedule its Backoff gives.
type Client struct {
	hc      *http.Client
	Retries int
	Backoff Strategy
}

// DefaultClient is the settings every New client starts from.
var DefaultClient = &Client{Retries: 3, Backoff: ConstantBackoff}

// New returns a client with DefaultClient's settings.
func New() *Client {
	return &Client{hc: &http.Client{}, Retries: DefaultClient.Retries, Backoff: DefaultClient.Backoff}
}

// ConstantBackoff waits a second whatever the try.
func ConstantBackoff(int) time.Duration { return time.Second } // want ConstantBackoff:`remote=0 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false result=1 `

// Get retries transport errors on the client's Backoff: one second every
// time unless the caller picks another strategy.
//
// case: flag nojitter
func (c *Client) Get(req *http.Request) (*http.Response, error) { // want Get:`remote=1 waits=true deaf=false jitter=1 durparam=0 retryafter=false bydefault=true`
	var err error
	for i := 1; i <= c.Retries; i++ {
		var resp *http.Response
		if resp, err = c.hc.Do(req); err == nil {
			return resp, nil
		}
		select {
		case <-time.After(c.Backoff(i) + time.Microsecond): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return nil, err
}

// JitterClient is Client whose default strategy is randomised.
type JitterClient struct {
	hc      *http.Client
	Retries int
	Backoff Strategy
}

// DefaultJitterClient is the settings every NewJitter client starts from.
var DefaultJitterClient = &JitterClient{Retries: 3, Backoff: JitterBackoff}

// NewJitter returns a client with DefaultJitterClient's settings.
func NewJitter() *JitterClient {
	return &JitterClient{hc: &http.Client{}, Retries: DefaultJitterClient.Retries, Backoff: DefaultJitterClient.Backoff}
}

// JitterBackoff waits up to n seconds, at random.
func JitterBackoff(n int) time.Duration { // want JitterBackoff:`remote=0 waits=false deaf=false jitter=0 durparam=0 retryafter=false bydefault=false result=2 `
	return time.Duration(rand.Int63n(int64(n) * int64(time.Second)))
}

// Get is Client.Get on the jittered default.
//
// case: clean
func (c *JitterClient) Get(req *http.Request) (*http.Response, error) { // want Get:`remote=1 waits=true deaf=false jitter=2`
	var err error
	for i := 1; i <= c.Retries; i++ {
		var resp *http.Response
		if resp, err = c.hc.Do(req); err == nil {
			return resp, nil
		}
		select {
		case <-time.After(c.Backoff(i)):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return nil, err
}

var errBusy = errors.New("busy")

var pause = 100 * time.Millisecond

// store is a key-value node reached over its own protocol.
type store struct{ op func(key string) error }

// backOff waits d times the try (none before the first) and says whether
// tries remain.
func backOff(try, tries int, d time.Duration) bool {
	if try >= tries {
		return false
	}
	if try > 0 {
		time.Sleep(time.Duration(try) * d)
	}
	return true
}

// backOffJitter is backOff with full jitter.
func backOffJitter(try, tries int, d time.Duration) bool {
	if try >= tries {
		return false
	}
	if try > 0 {
		time.Sleep(time.Duration(rand.Int63n(int64(try) * int64(d))))
	}
	return true
}

// Do retries a busy node: backOff's answer, reached only where the error
// is busy, says whether to go round.
//
// case: flag nojitter
func (s *store) Do(key string) error { // want Do:`remote=0 waits=true deaf=true jitter=1`
	var last error
	for i := 0; i < 6; i++ {
		last = s.op(key)
		retry := false
		if errors.Is(last, errBusy) {
			retry = backOff(i, 6, pause) // want `nojitter: backOff in a retry loop has a constant or purely exponential duration`
		}
		if !retry {
			return last
		}
	}
	return last
}

// DoJittered is Do on backOffJitter.
//
// case: clean
func (s *store) DoJittered(key string) error { // want DoJittered:`remote=0 waits=true deaf=true jitter=2`
	var last error
	for i := 0; i < 6; i++ {
		last = s.op(key)
		retry := false
		if errors.Is(last, errBusy) {
			retry = backOffJitter(i, 6, pause)
		}
		if !retry {
			return last
		}
	}
	return last
}
