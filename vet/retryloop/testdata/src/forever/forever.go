// Package forever holds loops that go round on success (long polls,
// reconnects, sessions restarted) and on failure, with and without
// anything to end their failures, and waits that are the server's.
package forever

import (
	"errors"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

type poller struct {
	url    string
	closed atomic.Bool
}

func relay(*http.Response) {}

// A long poll: an answer goes round at once, a failure after a constant
// 5 s, and nothing ends the failures.
//
// case: flag nojitter unbounded
func (p *poller) longPoll() {
	for { // want `unbounded: retry loop has no bound`
		resp, err := http.Get(p.url)
		if err != nil {
			time.Sleep(5 * time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		relay(resp)
	}
}

// The same long poll, left when its owner closes it.
//
// case: flag nojitter
func (p *poller) longPollUntilClosed() {
	for {
		if p.closed.Load() {
			return
		}
		resp, err := http.Get(p.url)
		if err != nil {
			time.Sleep(5 * time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		relay(resp)
	}
}

// A refresh schedule: a failure waits the full interval, as a success
// does. Nothing is retried sooner.
//
// case: clean
func (p *poller) refreshEveryMinute() {
	for {
		resp, err := http.Get(p.url)
		if err != nil {
			log.Print(err)
		} else {
			relay(resp)
		}
		time.Sleep(time.Minute)
	}
}

// session reads the stream until it fails: every return is an error.
func (p *poller) session() error {
	resp, err := http.Get(p.url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	for {
		if _, err := resp.Body.Read(buf); err != nil {
			return err
		}
	}
}

// A session restarted whenever it fails, which is every time it ends:
// each round is a retry after a constant 5 s, forever, of whatever the
// server answered (a 401 or a 429 read as a stream that ends).
//
// case: flag unclassified nojitter unbounded retryafter
func (p *poller) restartSession() {
	for { // want `unbounded: retry loop has no bound` `unclassified: retry loop around poller.session retries on every error`
		err := p.session()
		log.Print(err)
		time.Sleep(5 * time.Second) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
}

// sessionUntilEOF ends cleanly when the server closes the stream.
func (p *poller) sessionUntilEOF() error {
	resp, err := http.Get(p.url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	for {
		if _, err := resp.Body.Read(buf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// The same restart around a session that can end well: a pace on every
// round, not a retry's wait.
//
// case: clean
func (p *poller) restartSessionPaced() {
	for {
		err := p.sessionUntilEOF()
		if err != nil {
			log.Print(err)
		}
		time.Sleep(5 * time.Second)
	}
}

type peer struct {
	addr string
	up   chan struct{}
	gone chan error
}

var errBanned = errors.New("banned")

// handshake dials and waits up to 10 s for the server's greeting: a wait
// inside the attempt, handed no context.
func (p *peer) handshake() error {
	resp, err := http.Get(p.addr)
	if err != nil {
		return err
	}
	resp.Body.Close()
	select {
	case <-p.up:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("no greeting")
	}
}

// A connection loop whose attempt waits inside itself: its error is the
// attempt's failure, which goes round after a constant 10 s, forever.
//
// case: flag nojitter unbounded
func (p *peer) connectLoop() {
	first := true
	for { // want `unbounded: retry loop has no bound`
		err := p.handshake()
		if err != nil {
			if first {
				return
			}
			time.Sleep(10 * time.Second) // want `nojitter: this wait in a retry loop`
			continue
		}
		first = false
		if err := <-p.gone; errors.Is(err, errBanned) {
			return
		}
	}
}

// The same loop, jittered and giving up after five failures in a row.
//
// case: clean
func (p *peer) connectLoopBounded() {
	failures := 0
	for {
		err := p.handshake()
		if err != nil {
			failures++
			if failures > 5 {
				return
			}
			time.Sleep(rand.N(10 * time.Second))
			continue
		}
		failures = 0
		<-p.gone
	}
}

// RateLimitedError carries the wait the server asked for.
type RateLimitedError struct{ RetryAfter time.Duration }

func (e *RateLimitedError) Error() string { return "rate limited" }

// waitOutLimit sleeps what the server said on a rate-limit error, and
// hands every other error back.
func waitOutLimit(err error) error {
	var rl *RateLimitedError
	if !errors.As(err, &rl) {
		return err
	}
	time.Sleep(rl.RetryAfter)
	return nil
}

func post() error { return nil }

// Rate-limited calls retried after the server's own wait: no jitter to
// add to what the server said.
//
// case: clean
func postThrottled() error {
	for range 5 {
		err := post()
		if err == nil {
			return nil
		}
		if err = waitOutLimit(err); err != nil {
			return err
		}
	}
	return errors.New("still rate limited")
}

// waitFixed sleeps a constant 2 s on a rate-limit error.
func waitFixed(err error) error {
	var rl *RateLimitedError
	if !errors.As(err, &rl) {
		return err
	}
	time.Sleep(2 * time.Second)
	return nil
}

// The same loop, waiting a constant of its own instead.
//
// case: flag nojitter
func postThrottledFixed() error {
	for range 5 {
		err := post()
		if err == nil {
			return nil
		}
		if err = waitFixed(err); err != nil { // want `nojitter: waitFixed in a retry loop`
			return err
		}
	}
	return errors.New("still rate limited")
}

// LimitError is a rate-limit answer with the server's wait in ms.
type LimitError struct{ RetryAfterMs int64 }

func (e *LimitError) Error() string { return "limit exceeded" }

// limited returns the server's wait, or no wait and false.
func limited(err error) (time.Duration, bool) {
	var le *LimitError
	if !errors.As(err, &le) {
		return 0, false
	}
	return time.Duration(le.RetryAfterMs) * time.Millisecond, true
}

// Retried after the wait the server named, in its own units: unbounded,
// not jitterless.
//
// case: flag unbounded
func postLimited() error {
	for { // want `unbounded: retry loop has no bound`
		err := post()
		if err == nil {
			return nil
		}
		d, ok := limited(err)
		if !ok {
			return err
		}
		time.Sleep(d)
	}
}

// limitedFixed returns a constant 2 s, or no wait and false.
func limitedFixed(err error) (time.Duration, bool) {
	var le *LimitError
	if !errors.As(err, &le) {
		return 0, false
	}
	return 2 * time.Second, true
}

// The same loop with a wait of its own making.
//
// case: flag nojitter unbounded
func postLimitedFixed() error {
	for { // want `unbounded: retry loop has no bound`
		err := post()
		if err == nil {
			return nil
		}
		d, ok := limitedFixed(err)
		if !ok {
			return err
		}
		time.Sleep(d) // want `nojitter: this wait in a retry loop`
	}
}

// A webhook server restarted 5 s after it fails, forever: its port is this
// machine's, no dependency to spread out for.
//
// case: clean
func serveForever(addr string) {
	for {
		if err := http.ListenAndServe(addr, nil); err != nil {
			log.Print(err)
			time.Sleep(5 * time.Second)
		}
	}
}

type wsConn struct {
	url       string
	conn      net.Conn
	onConnect func() error
}

// A dial retried until it connects; the handler's error, reached only
// once connected, ends no run of failed dials.
//
// case: flag unbounded
func (c *wsConn) dial() {
	for { // want `unbounded: retry loop has no bound`
		conn, err := net.Dial("tcp", c.url)
		if err == nil {
			c.conn = conn
			if err := c.onConnect(); err != nil {
				log.Fatal(err)
			}
			return
		}
		time.Sleep(rand.N(time.Second))
	}
}

// The same dial, given up after ten failures.
//
// case: clean
func (c *wsConn) dialTen() {
	for range 10 {
		conn, err := net.Dial("tcp", c.url)
		if err == nil {
			c.conn = conn
			if err := c.onConnect(); err != nil {
				log.Fatal(err)
			}
			return
		}
		time.Sleep(rand.N(time.Second))
	}
}
