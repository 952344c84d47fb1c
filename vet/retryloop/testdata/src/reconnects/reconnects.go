// Package reconnects holds, written anew, the shapes of reconnect and
// subscription loops that go round on success (the session ended, dial
// again) and keep a backoff across failures: a count of failures in a row,
// or a delay that grows on each failure and is set back once connected.
package reconnects

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"
)

// session is a connection to a remote server.
type session interface {
	Serve() error
}

// dialer opens sessions.
type dialer interface {
	Dial(addr string) (session, error)
}

// pool keeps a client's connections.
type pool struct {
	d    dialer
	shut bool
}

func (p *pool) isShutdown() bool { return p.shut }

var reconnectDelay = 200 * time.Millisecond

// The wait at the top of every round is the failures in a row times a
// constant: zero after a session that ended, growing while dials fail,
// the same for every client that lost the server together.
//
// case: flag nojitter
func maintain(d dialer, addr string, stop func() bool) {
	failures := 0
	for !stop() {
		time.Sleep(time.Duration(failures) * reconnectDelay) // want `nojitter: this wait in a retry loop`
		failures++
		s, err := d.Dial(addr)
		if err != nil {
			continue
		}
		failures = 0
		_ = s.Serve()
	}
}

// A subscription loop whose interval grows on each failed connect and is
// set back once subscribed; the session going away goes round too.
//
// case: flag nojitter
func subscribe(d dialer, addr string, done <-chan struct{}) {
	interval := 3 * time.Second
	for {
		select {
		case <-done:
			return
		default:
		}
		s, err := d.Dial(addr)
		if err == nil {
			interval = 3 * time.Second
			_ = s.Serve()
		}
		time.Sleep(interval) // want `nojitter: this wait in a retry loop`
		interval = interval * 17 / 10
	}
}

// The same subscription loop with the wait randomised.
//
// case: clean
func subscribeJittered(d dialer, addr string, done <-chan struct{}) {
	interval := 3 * time.Second
	for {
		select {
		case <-done:
			return
		default:
		}
		s, err := d.Dial(addr)
		if err == nil {
			interval = 3 * time.Second
			_ = s.Serve()
		}
		time.Sleep(interval/2 + rand.N(interval/2))
		interval = interval * 17 / 10
	}
}

// A poll that counts the rounds since the last change, to log them, and
// waits the same interval on every round: a pace, not a backoff.
//
// case: clean
func poll(d dialer, addr string, done <-chan struct{}) {
	quiet := 0
	for {
		select {
		case <-done:
			return
		case <-time.After(time.Minute):
		}
		s, err := d.Dial(addr)
		if err != nil {
			quiet++
			continue
		}
		quiet = 0
		_ = s.Serve()
	}
}

// A reconnect that dials until it succeeds, over the servers in turn,
// waiting longer after each full pass, capped: no randomness.
//
// case: flag nojitter
func (p *pool) reconnect(servers []string) session {
	var (
		tries, turns int
	)
	for !p.isShutdown() {
		s, err := p.d.Dial(servers[tries%len(servers)])
		if s != nil && err == nil {
			return s
		}
		if tries > 0 && tries%len(servers) == 0 && turns < 50 {
			turns++
		}
		tries++
		time.Sleep(time.Duration(math.Min(float64(turns), 50)*100) * time.Millisecond) // want `nojitter: this wait in a retry loop`
	}
	return nil
}

// The same dial, but what it hands back is checked, not trusted: a
// session that came with no error but is not usable goes round at once,
// and a failed dial ends the loop. Only an unusable session is retried,
// and without a wait.
//
// case: clean
func (p *pool) dialUsable(addr string) session {
	for !p.isShutdown() {
		s, err := p.d.Dial(addr)
		if err != nil {
			return nil
		}
		if s != nil {
			return s
		}
	}
	return nil
}

// nextServer asks the address server which server to dial.
func nextServer(hc *http.Client, url string) (string, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("address server: %s", resp.Status)
	}
	return resp.Header.Get("Location"), nil
}

// A reconnect that asks for the next server over HTTP, then dials it:
// every dial failure goes round, as a transport error does; the wait is
// jittered.
//
// case: clean
func (p *pool) redial(hc *http.Client, url string) session {
	for !p.isShutdown() {
		addr, err := nextServer(hc, url)
		if err != nil {
			return nil
		}
		s, err := p.d.Dial(addr)
		if s != nil && err == nil {
			return s
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
	}
	return nil
}

// An HTTP fetch retried on every error and every status, the address
// server's 404 included: unclassified, and a 429's Retry-After unread.
//
// case: flag unclassified retryafter
func (p *pool) fetchAddr(hc *http.Client, url string) string {
	for !p.isShutdown() { // want `unclassified: retry loop around nextServer retries on every error`
		addr, err := nextServer(hc, url)
		if err == nil {
			return addr
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second)))) // want `retryafter: retry loop retries 429 and 503`
	}
	return ""
}

// A local queue that is full: the wait doubles up to a cap while the
// enqueue fails, and nothing remote is called or failed; the cap is no
// reset.
//
// case: clean
func enqueueAll(items []int, enqueue func(int) bool, quit <-chan struct{}, maxBackoff time.Duration) bool {
outer:
	for _, it := range items {
		backoff := 5 * time.Millisecond
		for {
			select {
			case <-quit:
				return false
			default:
			}
			if enqueue(it) {
				continue outer
			}
			time.Sleep(backoff)
			backoff *= 2
			if backoff > maxBackoff {
				backoff = maxBackoff
			}
		}
	}
	return true
}

// A loop that dials a session and also posts a status report over HTTP,
// re-sent on every error and every status (a 404 or a 401 included)
// with the dial: the dial does not make the HTTP request's failures a
// transport's, and a 429's Retry-After goes unread.
//
// case: flag unclassified retryafter
func (p *pool) dialAndReport(hc *http.Client, addr, url string) session {
	for !p.isShutdown() { // want `unclassified: retry loop around Client.Post retries on every error and on every non-2xx status`
		s, err := p.d.Dial(addr)
		if err != nil {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Second)))) // want `retryafter: retry loop retries 429 and 503`
			continue
		}
		resp, err := hc.Post(url, "text/plain", nil)
		if err != nil {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return s
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
	}
	return nil
}

// The same dial and report, but a failed report ends the loop: only the
// dial's failures go round, a transport's.
//
// case: clean
func (p *pool) dialThenReport(hc *http.Client, addr, url string) session {
	for !p.isShutdown() {
		s, err := p.d.Dial(addr)
		if err != nil {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
			continue
		}
		resp, err := hc.Post(url, "text/plain", nil)
		if err != nil {
			break
		}
		resp.Body.Close()
		return s
	}
	return nil
}
