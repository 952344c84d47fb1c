// Package reads holds the shapes of real retry code the analyzer reads
// through: classifiers evaluated rather than trusted, durations behind an
// interface or a caller's argument, configuration set by option functions,
// retry by recursion, and a go-round taken before any attempt. Written
// anew for these tests.
package reads

import (
	"errors"
	"io"
	"io/ioutil"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"syscall"
	"time"
)

// retrier decides, from a status and an error, whether to go again and
// after how long.
type retrier struct{ n int }

func (r *retrier) next(code int, err error) (time.Duration, bool) {
	if code == http.StatusOK || r.n >= 4 {
		return 0, false
	}
	if !transient(code, err) {
		return 0, false
	}
	r.n++
	return time.Duration(rand.Int64N(int64(time.Second << r.n))), true
}

func transient(code int, err error) bool {
	switch {
	case code == http.StatusTooManyRequests, code >= 500:
		return true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return false
}

// case: flag retryafter
func getWithRetrier(c *http.Client, url string) (*http.Response, error) {
	r := &retrier{}
	for {
		resp, err := c.Get(url)
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		if d, again := r.next(code, err); again {
			if resp != nil {
				resp.Body.Close()
			}
			time.Sleep(d) // want `retryafter: retry loop retries 429 and 503 without reading Retry-After`
			continue
		}
		return resp, err
	}
}

func retryableStatus(code int) bool { return code >= 400 }

// case: flag unclassified nojitter retryafter
func fetchStatus(c *http.Client, url string) (*http.Response, error) {
	for i := 0; i < 4; i++ { // want `unclassified: retry loop around Client\.Get retries on 400, 401, 403, 404, 413, 422, which will not change on a retry`
		resp, err := c.Get(url)
		if err != nil {
			return nil, err
		}
		if !retryableStatus(resp.StatusCode) {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(time.Second << i) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
	return nil, errors.New("gave up")
}

func overloaded(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// case: clean
func fetchOverloaded(c *http.Client, url string) (*http.Response, error) {
	for i := 0; i < 4; i++ {
		resp, err := c.Get(url)
		if err != nil {
			return nil, err
		}
		if !overloaded(resp.StatusCode) {
			return resp, nil
		}
		wait := time.Duration(rand.Int64N(int64(time.Second << i)))
		if s := resp.Header.Get("Retry-After"); s != "" {
			if d, err := time.ParseDuration(s + "s"); err == nil {
				wait = d
			}
		}
		resp.Body.Close()
		time.Sleep(wait)
	}
	return nil, errors.New("gave up")
}

// Policy says how long to wait before reconnecting.
type Policy interface {
	Interval(attempt int) time.Duration
}

type constantPolicy struct{ every time.Duration }

func (p *constantPolicy) Interval(int) time.Duration { return p.every } // want Interval:`result=1 resultparams=0 resultbydefault=true`

type randomPolicy struct{ max time.Duration }

func (p *randomPolicy) Interval(int) time.Duration { // want Interval:`result=2`
	return time.Duration(rand.Int64N(int64(p.max)))
}

// Config is a client's configuration.
type Config struct {
	Reconnect Policy
	Jittered  Policy
}

// NewConfig returns the default configuration.
func NewConfig() *Config {
	return &Config{
		Reconnect: &constantPolicy{every: time.Second},
		Jittered:  &randomPolicy{max: time.Second},
	}
}

// case: flag nojitter
func reconnect(cfg *Config, dial func() error) error {
	p := cfg.Reconnect
	var err error
	for i := 0; i < 3; i++ {
		if err = dial(); err == nil {
			return nil
		}
		time.Sleep(p.Interval(i)) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
	}
	return err
}

// case: clean
func reconnectJittered(cfg *Config, dial func() error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = dial(); err == nil {
			return nil
		}
		time.Sleep(cfg.Jittered.Interval(i))
	}
	return err
}

var errNoResponders = errors.New("no responders")

type pubOpts struct{ wait time.Duration }

// PubOpt sets a publishing option.
type PubOpt func(*pubOpts)

// WithWait sets the wait between attempts.
func WithWait(d time.Duration) PubOpt { return func(o *pubOpts) { o.wait = d } }

// case: flag nojitter
func publish(send func() error, opts ...PubOpt) error {
	o := pubOpts{wait: 250 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	err := send()
	for r := 0; errors.Is(err, errNoResponders) && r < 3; r++ {
		time.Sleep(o.wait) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		err = send()
	}
	return err
}

const defaultWait = 200 * time.Millisecond

// case: flag nojitter
func publishEvery(send func() error, wait time.Duration) error {
	err := send()
	for r := 0; errors.Is(err, errNoResponders) && r < 3; r++ {
		time.Sleep(wait) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		err = send()
	}
	return err
}

// PublishDefault publishes with the default wait.
func PublishDefault(send func() error) error { return publishEvery(send, defaultWait) } // want PublishDefault:`remote=0 waits=true deaf=true jitter=1`

type metaClient struct{ fetch func() error }

// case: flag nojitter
func (m *metaClient) refresh(attempts int) error {
	retry := func(err error) error {
		if attempts > 0 {
			time.Sleep(250 * time.Millisecond) // want `nojitter: this wait in a retry loop`
			return m.refresh(attempts - 1)
		}
		return err
	}
	if err := m.fetch(); err != nil {
		return retry(err)
	}
	return nil
}

// case: clean
func (m *metaClient) walk(depth int) error {
	// Recursion over a tree after a pause that is no retry: no error on
	// the way to the call.
	if depth == 0 {
		return nil
	}
	time.Sleep(10 * time.Millisecond)
	return m.walk(depth - 1)
}

// case: flag nojitter
func withBackoff(f func(int) (bool, error), skipFirst bool) error {
	interval := time.Second
	var err error
	for i := 0; ; i++ {
		if i == 0 && skipFirst {
			// A go-round before any attempt says nothing of how the
			// loop treats an attempt's outcome.
			time.Sleep(interval) // want `nojitter: this wait in a retry loop`
			continue
		}
		again, err2 := f(i)
		if err = err2; !again {
			return err
		}
		if i >= 4 {
			break
		}
		time.Sleep(interval) // want `nojitter: this wait in a retry loop`
		interval *= 2
	}
	return err
}

// case: clean
func removeAll(dir string) error {
	// A local file system retried while busy: nothing shared to
	// synchronise on.
	for i := 0; ; i++ {
		err := os.RemoveAll(dir)
		if err == nil || i >= 10 || !errors.Is(err, syscall.EBUSY) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A file written through io/ioutil, retried while busy: the same local
// operation as os.WriteFile.
//
// case: clean
func writeStatus(path string, b []byte) error {
	for i := 0; ; i++ {
		err := ioutil.WriteFile(path, b, 0o644)
		if err == nil || i >= 10 || !errors.Is(err, syscall.EBUSY) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type backo struct {
	base   time.Duration
	jitter float64
}

func newBacko(base time.Duration, jitter float64) *backo { return &backo{base, jitter} }

func defaultBacko() *backo { return newBacko(100*time.Millisecond, 0) }

func (b *backo) duration(attempt int) time.Duration {
	d := float64(b.base) * math.Pow(2, float64(attempt))
	if b.jitter != 0 {
		d += rand.Float64() * b.jitter * d
	}
	d = math.Min(d, float64(10*time.Second))
	return time.Duration(d)
}

type sender struct {
	wait func(int) time.Duration
	quit chan struct{}
}

func newSender() *sender {
	s := &sender{quit: make(chan struct{})}
	s.wait = defaultBacko().duration
	return s
}

// case: flag nojitter
func (s *sender) send(upload func() error) error {
	// The jitter is a setting no caller in the package sets: by
	// default the wait doubles from 100ms, the same for every sender.
	var err error
	for i := 0; i < 10; i++ {
		if err = upload(); err == nil {
			return nil
		}
		select {
		case <-time.After(s.wait(i)): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		case <-s.quit:
			return err
		}
	}
	return err
}

type pool struct {
	shut bool
	dial func() error
}

func (p *pool) closed() bool { return p.shut }

// case: flag nojitter
func (p *pool) redial() {
	// Ends when the pool is closed: bounded by its owner's shutdown.
	for {
		if p.closed() {
			return
		}
		if err := p.dial(); err != nil {
			time.Sleep(time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		return
	}
}

// case: flag nojitter
func (p *pool) redialUntilQuit(quit chan struct{}) {
	for {
		if err := p.dial(); err == nil {
			return
		}
		select {
		case <-quit:
			return
		case <-time.After(time.Second): // want `nojitter: this wait in a retry loop`
		}
	}
}

// Pinger keeps a connection alive.
type Pinger struct{ tmr *time.Timer }

// Start arms the ping timer.
func (p *Pinger) Start(ping func()) { p.tmr = time.AfterFunc(time.Second, ping) }

// Rearm schedules the next ping: resetting a callback's timer waits for
// nothing, so Rearm is no wait helper (no fact).
func (p *Pinger) Rearm() { p.tmr.Reset(time.Second) }
