package recoilhttp

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the idle limit on a response body: IdleBody and
// SSEIdleBody, each with a timer of its own, and the bodies a Transport
// returns, watched together by one timer of the Transport's (idleWatch).

// IdleBody wraps a response body so that reading fails with an *IdleError
// when no bytes arrive for timeout. The time counts from the call to IdleBody
// — make it when the headers arrive — and restarts with every read that
// returns bytes. It is separate from any deadline on the whole response: a
// long answer that keeps arriving is never cut off, a stalled one is
// (abort if no chunk has arrived in 15 seconds: a stalled stream is a
// failure; a slow one is not).
//
// When the timeout runs out the wrapper closes the underlying body, so that a
// Read blocked on it returns; the wrapper starts no goroutine (it uses one
// time.AfterFunc timer, reset on progress). A read that fails after at least
// one byte was delivered returns a *StreamError wrapping the failure; io.EOF
// is returned as it is. A timeout <= 0 means no idle limit; failures are still
// wrapped. Close stops the timer and closes the underlying body; it may be
// called concurrently with Read, as for any response body. A Read after
// Close fails.
func IdleBody(body io.ReadCloser, timeout time.Duration) io.ReadCloser {
	if body == nil {
		return nil
	}
	return newIdleBody(body, timeout, false)
}

// SSEIdleBody is IdleBody for a text/event-stream body: only events that
// carry content restart the idle timer. An event named "ping" (Anthropic's
// keep-alive) and comment lines (those starting with ':', the SSE keep-alive)
// do not, so a stream whose server still answers pings but produces nothing
// fails after timeout all the same. An event counts when it is complete (at
// the blank line that ends it) and has data, as an SSE client dispatches it.
//
// The stream is parsed incrementally as the bytes pass through, in constant
// memory; the reader receives them unchanged. A failure is wrapped in a
// *StreamError only once a content event has been delivered: a stream that
// fails after nothing but pings and comments gave the caller nothing, and is
// returned unwrapped like a failure before any byte.
func SSEIdleBody(body io.ReadCloser, timeout time.Duration) io.ReadCloser {
	if body == nil {
		return nil
	}
	return newIdleBody(body, timeout, true)
}

// errReadClosed is what a Read of an idle-limited body returns after Close.
var errReadClosed = errors.New("recoilhttp: read on closed response body")

// idleBody states.
const (
	bodyOpen   int32 = iota
	bodyIdle         // the idle limit ran out and closed the underlying body
	bodyClosed       // the caller closed it
)

// usesClosed is the bit of idleBody.uses set once the body is closed.
const usesClosed = 1 << 30

// idleBody is a response body under an idle limit: with a timer of its own
// (IdleBody), or watched with the other bodies of a Transport (w).
type idleBody struct {
	// rc is the underlying body, dropped (nil) once the body is closed and
	// no call uses it: a watched body lives in a batch (idleWatch.open)
	// that a caller holding another body of it keeps in memory, and it
	// must not keep its own underlying body (a connection's buffers, a
	// request) in memory too.
	rc      io.ReadCloser
	timeout time.Duration
	timer   *time.Timer  // its own timer; nil when watched or without a timeout
	state   atomic.Int32 // bodyOpen, bodyIdle or bodyClosed
	uses    atomic.Int32 // the calls using rc now, plus usesClosed once closed

	// A watched body's: its watch, its links in the watch's list of open
	// bodies (under w.mu; listed is set under it as well), and when it was
	// opened or its last progress came (idleNow).
	w          *idleWatch
	prev, next *idleBody
	listed     atomic.Bool
	last       atomic.Int64

	// Owned by Read.
	delivered int64
	content   bool // something worth a StreamError has been delivered
	sse       bool
	scan      sseScanner
}

func newIdleBody(body io.ReadCloser, timeout time.Duration, sse bool) *idleBody {
	b := &idleBody{rc: body, timeout: timeout, sse: sse}
	if timeout > 0 {
		b.timer = time.AfterFunc(timeout, b.expire)
	}
	return b
}

// acquire takes a use of rc, unless the body is closed.
func (b *idleBody) acquire() bool {
	for {
		u := b.uses.Load()
		if u&usesClosed != 0 {
			return false
		}
		if b.uses.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

// release gives a use of rc back; the last, once the body is closed, drops
// rc.
func (b *idleBody) release() {
	if b.uses.Add(-1) == usesClosed {
		b.rc = nil
	}
}

// expire runs when the body has been idle for its timeout: it closes the
// underlying body, so that a Read blocked on it returns.
func (b *idleBody) expire() {
	if !b.acquire() {
		return
	}
	if b.state.CompareAndSwap(bodyOpen, bodyIdle) {
		b.rc.Close()
	}
	b.release()
}

func (b *idleBody) Read(p []byte) (int, error) {
	if !b.acquire() {
		return 0, errReadClosed
	}
	n, err := b.rc.Read(p)
	b.release()
	if n > 0 {
		b.delivered += int64(n)
		if !b.sse || b.scan.feed(p[:n]) > 0 {
			b.content = true
			b.progress()
		}
	}
	if err == nil {
		return n, nil
	}
	b.stop() // the stream is over either way
	if errors.Is(err, io.EOF) {
		return n, err
	}
	if b.state.Load() == bodyIdle {
		err = &IdleError{After: b.timeout}
	}
	if b.content {
		err = &StreamError{Delivered: b.delivered, Err: err}
	}
	return n, err
}

// progress restarts the idle time: a watched body notes the time, which
// its watch reads when its timer fires; a body with a timer resets it.
func (b *idleBody) progress() {
	switch {
	case b.w != nil:
		b.last.Store(idleNow())
	case b.timer != nil && b.state.Load() == bodyOpen:
		b.timer.Reset(b.timeout)
	}
}

// stop ends the idle limit: the body's timer stops, or its watch forgets it.
func (b *idleBody) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
	if b.listed.Load() {
		b.w.remove(b)
	}
}

func (b *idleBody) Close() error {
	b.stop()
	if !b.acquire() {
		return nil // closed already
	}
	var err error
	if b.state.CompareAndSwap(bodyOpen, bodyClosed) {
		err = b.rc.Close()
	} // else the idle limit closed it already
	b.uses.Or(usesClosed)
	b.release()
	return err
}

// idleWatch applies a Transport's idle limit to the bodies it returns:
// one list of the open bodies and one timer, armed for the first moment
// one of them may have been idle for its timeout. A read that makes
// progress only notes the time in its body; when the timer fires, its
// function (on a goroutine of its own, which then ends) closes the bodies
// whose time is up and arms the timer for the next. No goroutine runs in
// between. When the last body is done, the timer is left to fire once
// more, find none and stop, so that a Transport serving one request after
// another does not set and stop it for each; in a synctest bubble it is
// stopped at once, so that the bubble's end leaves nothing behind.
//
// The bodies are allocated idleBatch at a time and never reused: a caller
// may hold a body, and read it, long after closing it. A closed body drops
// its underlying one, so a batch kept by one body's holder holds little
// more than its own memory.
//
// The zero idleWatch is ready for use.
type idleWatch struct {
	mu    sync.Mutex
	head  *idleBody   // the open bodies
	timer *time.Timer // nil until the first body
	armed bool        // the timer is set, to fire at at
	at    int64       // idleNow
	fake  bool        // the timer belongs to a synctest bubble
	batch []idleBody  // bodies not yet handed out
}

// idleEpoch is what watched bodies' times count from.
var idleEpoch = time.Now()

// idleNow is the time for a watched body: nanoseconds since idleEpoch on
// the monotonic clock (in a synctest bubble, on the bubble's clock, which
// is as consistent).
func idleNow() int64 { return int64(time.Since(idleEpoch)) }

// inBubble reports whether the caller runs in a synctest bubble, where
// time.Now has no monotonic reading.
func inBubble() bool {
	now := time.Now()
	return now == now.Round(0)
}

// idleBatch is how many bodies an idleWatch allocates at once.
const idleBatch = 16

// open returns body under the idle limit timeout (> 0), watched by w.
func (w *idleWatch) open(body io.ReadCloser, timeout time.Duration, sse bool) *idleBody {
	now := idleNow()
	w.mu.Lock()
	if len(w.batch) == 0 {
		w.batch = make([]idleBody, idleBatch)
	}
	b := &w.batch[0]
	if w.batch = w.batch[1:]; len(w.batch) == 0 {
		w.batch = nil
	}
	b.rc, b.timeout, b.sse, b.w = body, timeout, sse, w
	b.last.Store(now)
	b.next = w.head
	if w.head != nil {
		w.head.prev = b
	}
	w.head = b
	b.listed.Store(true)
	if at := now + int64(timeout); !w.armed || at < w.at {
		w.arm(now, at)
	}
	w.mu.Unlock()
	return b
}

// arm sets the timer to fire at at. Under w.mu.
func (w *idleWatch) arm(now, at int64) {
	// A timer made in a synctest bubble cannot be set from outside it, nor
	// one made outside run on the bubble's clock: a Transport used in both
	// gets a timer for each.
	d := time.Duration(at - now)
	if fake := inBubble(); w.timer == nil || fake != w.fake {
		w.timer, w.fake = time.AfterFunc(d, w.fire), fake
	} else {
		w.timer.Reset(d)
	}
	w.armed, w.at = true, at
}

// fire runs on the timer: it closes the bodies idle for their timeout and
// arms the timer for the first of the others.
func (w *idleWatch) fire() {
	now, fake := idleNow(), inBubble()
	var (
		cut  *idleBody // the bodies to close, linked through next
		next int64     // the first moment another may be idle too long
		more bool      // another is open
	)
	w.mu.Lock()
	if fake != w.fake { // a timer of the other clock's, replaced since
		w.mu.Unlock()
		return
	}
	for b := w.head; b != nil; {
		after := b.next
		at := b.last.Load() + int64(b.timeout)
		switch {
		case at <= now:
			w.unlink(b)
			b.next, cut = cut, b
		case !more || at < next:
			next, more = at, true
		}
		b = after
	}
	w.armed = false
	if more {
		w.arm(now, next)
	}
	w.mu.Unlock()
	for cut != nil { // outside the lock: closing a body may take a while
		b := cut
		cut, b.next = b.next, nil
		b.expire()
	}
}

// remove forgets b, which is done; in a synctest bubble, it stops the
// timer when no body is left.
func (w *idleWatch) remove(b *idleBody) {
	w.mu.Lock()
	if b.listed.Load() {
		w.unlink(b)
		if w.head == nil && w.armed && w.fake {
			w.timer.Stop()
			w.armed = false
		}
	}
	w.mu.Unlock()
}

// unlink takes b out of the list. Under w.mu.
func (w *idleWatch) unlink(b *idleBody) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		w.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
	b.listed.Store(false)
}
