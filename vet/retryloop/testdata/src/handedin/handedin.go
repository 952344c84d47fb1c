// Package handedin holds, written anew, retry loops whose wait or attempt
// is handed in from elsewhere in the package: a sleep func field a
// constructor sets and an option may replace, a wait.Backoff parameter its
// callers fill, a duration a command-line flag sets, and a func parameter
// that answers with an HTTP response.
package handedin

import (
	"errors"
	"flag"
	"log"
	"math/rand"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

type retrier struct {
	try   func(n int) error
	sleep func(time.Duration)
	wait  time.Duration
	max   int
}

func newRetrier(try func(int) error) *retrier {
	return &retrier{try: try, sleep: time.Sleep, wait: time.Second, max: 5}
}

// withSleep lets tests swap the sleep; by default it is time.Sleep.
func (r *retrier) withSleep(s func(time.Duration)) *retrier {
	if s != nil {
		r.sleep = s
	}
	return r
}

// do tries at most max+1 times on the errors the caller accepts, each
// wait twice the last on the sleep field, time.Sleep by default.
//
// case: flag nojitter
func (r *retrier) do(again func(error) bool) error {
	var err error
	for i := 0; i <= r.max; i++ {
		if err = r.try(i); err == nil || !again(err) {
			return err
		}
		r.sleep(r.wait) // want `nojitter: r.sleep in a retry loop has a constant or purely exponential duration by default`
		r.wait *= 2
	}
	return err
}

// doJittered is do with each wait drawn at random up to its length.
//
// case: clean
func (r *retrier) doJittered(again func(error) bool) error {
	var err error
	for i := 0; i <= r.max; i++ {
		if err = r.try(i); err == nil || !again(err) {
			return err
		}
		r.sleep(time.Duration(rand.Int63n(int64(r.wait))))
		r.wait *= 2
	}
	return err
}

type pauser struct {
	pause func(time.Duration)
	try   func() error
}

// withPause is the only thing that sets pause: the user's own function.
func withPause(p func(time.Duration)) *pauser { return &pauser{pause: p} }

// run waits with whatever the user handed in, nothing of the package's:
// no wait it can judge.
//
// case: clean
func (p *pauser) run() error {
	var err error
	for range 3 {
		if err = p.try(); err == nil {
			return nil
		}
		p.pause(time.Second)
	}
	return err
}

var taintBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Steps: 10}

var jitteredBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 10}

type nodes interface{ Untaint(name string) error }

func startUntaint(n nodes) {
	time.AfterFunc(time.Second, func() {
		untaintInBackground(n, taintBackoff, untaint)
		untaintJittered(n, jitteredBackoff, untaint)
	})
}

func untaint(n nodes) error { return n.Untaint("node-1") }

// untaintInBackground retries the removal on every error on the schedule
// its only caller passes: taintBackoff, which has no Jitter.
//
// case: flag nojitter
func untaintInBackground(n nodes, b wait.Backoff, remove func(nodes) error) {
	err := wait.ExponentialBackoff(b, func() (bool, error) { // want `nojitter: wait.ExponentialBackoff waits a constant or purely exponential schedule`
		if err := remove(n); err != nil {
			log.Print(err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		log.Print(err)
	}
}

// untaintJittered is untaintInBackground whose caller passes a Backoff
// with a Jitter.
//
// case: clean
func untaintJittered(n nodes, b wait.Backoff, remove func(nodes) error) {
	err := wait.ExponentialBackoff(b, func() (bool, error) {
		if err := remove(n); err != nil {
			log.Print(err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		log.Print(err)
	}
}

// Config is what the command line sets.
type Config struct {
	tries int
	pause time.Duration
}

// AddFlags binds the configuration to flags.
func (c *Config) AddFlags() {
	flag.IntVar(&c.tries, "tries", 0, "tries")
	flag.DurationVar(&c.pause, "pause", time.Second, "pause between tries")
}

// Wrap retries f as the flags say.
func (c *Config) Wrap(f func() (*http.Response, error)) (*http.Response, error) { // want Wrap:`remote=0 waits=true deaf=true jitter=1`
	return (&executor{tries: c.tries, pause: c.pause}).run(f)
}

type executor struct {
	tries int
	pause time.Duration
}

// run sends what it is handed, an HTTP request by its shape, and goes
// round on 503 after the flag's pause, doubled each time, with no
// randomness and no look at Retry-After.
//
// case: flag nojitter retryafter
func (e *executor) run(f func() (*http.Response, error)) (*http.Response, error) {
	pause := e.pause
	for range e.tries + 1 {
		resp, err := f()
		if err != nil {
			return resp, err
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			return resp, nil
		}
		resp.Body.Close()
		time.Sleep(pause) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration` `retryafter: retry loop retries 503 without reading Retry-After`
		pause *= 2
	}
	return nil, errors.New("out of tries")
}

// runOn500 goes round only on a 500, after a random wait: nothing to
// report.
//
// case: clean
func (e *executor) runOn500(f func() (*http.Response, error)) (*http.Response, error) {
	for range e.tries + 1 {
		resp, err := f()
		if err != nil || resp.StatusCode != http.StatusInternalServerError {
			return resp, err
		}
		resp.Body.Close()
		time.Sleep(time.Duration(rand.Int63n(int64(e.pause))))
	}
	return nil, errors.New("out of tries")
}

// Options are what the user may set; a nil Backoff takes the default.
type Options struct {
	Backoff func(attempt int) time.Duration
}

type poster struct {
	hc      *http.Client
	backoff func(attempt int) time.Duration
	jitter  func(attempt int) time.Duration
}

// forget drops the user's backoff from a copy of the options: nil is not
// a default of the package's own.
func (o *Options) forget() { o.Backoff = nil }

func defaultBackoff(a int) time.Duration { return 200 * time.Millisecond << a }

func jitteredDelay(a int) time.Duration {
	return time.Duration(rand.Int63n(int64(200 * time.Millisecond << a)))
}

func newPoster(o Options) *poster {
	backoff := o.Backoff
	if backoff == nil {
		backoff = defaultBackoff
	}
	jitter := o.Backoff
	if jitter == nil {
		jitter = jitteredDelay
	}
	return &poster{hc: http.DefaultClient, backoff: backoff, jitter: jitter}
}

// post goes round on a 502 after the backoff the constructor defaults to
// when the user gives none: doubling, with no randomness.
//
// case: flag nojitter
func (p *poster) post(req *http.Request) (*http.Response, error) {
	for a := range 4 {
		resp, err := p.hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusBadGateway {
			return resp, err
		}
		resp.Body.Close()
		select {
		case <-time.After(p.backoff(a)): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return nil, errors.New("bad gateway")
}

// postJittered is post with the jittered default.
//
// case: clean
func (p *poster) postJittered(req *http.Request) (*http.Response, error) {
	for a := range 4 {
		resp, err := p.hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusBadGateway {
			return resp, err
		}
		resp.Body.Close()
		select {
		case <-time.After(p.jitter(a)):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return nil, errors.New("bad gateway")
}
