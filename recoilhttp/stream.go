package recoilhttp

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"
)

// ErrIdle is the error a stream fails with when nothing arrives on it for its
// idle timeout. The error returned is an *IdleError, which matches ErrIdle
// with errors.Is.
var ErrIdle = errors.New("recoilhttp: stream idle")

// ErrNoEvent is returned by FirstEvent when the first limit bytes of a stream
// hold no complete event other than pings and comments.
var ErrNoEvent = errors.New("recoilhttp: no SSE event within the limit")

// IdleError reports a stream that went idle: no bytes (or, for an SSE body, no
// content events) arrived for After. It matches ErrIdle with errors.Is and,
// following the net.Error convention, reports Timeout() true. It is not
// modified once returned.
type IdleError struct {
	// After is the idle timeout that ran out.
	After time.Duration
}

func (e *IdleError) Error() string { return "recoilhttp: stream idle for " + e.After.String() }

// Is reports whether target is ErrIdle.
func (e *IdleError) Is(target error) bool { return target == ErrIdle }

// Timeout reports true: an idle stream is a timeout.
func (e *IdleError) Timeout() bool { return true }

// StreamError is a stream failing after content was delivered to the reader.
// Unlike a failure before any content, it cannot be retried silently: the
// caller has already consumed part of one answer, and a second attempt is a
// different one. The body wrappers (IdleBody, SSEIdleBody) return it; a
// failure before any content is returned unwrapped. It is not modified once
// returned.
type StreamError struct {
	// Delivered is how many bytes the reader had received through the
	// wrapper, including the read that failed.
	Delivered int64
	// Err is the failure: an *IdleError or the underlying body's error.
	Err error
}

func (e *StreamError) Error() string {
	msg := "recoilhttp: stream failed after " + strconv.FormatInt(e.Delivered, 10) + " bytes"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Err.
func (e *StreamError) Unwrap() error { return e.Err }

// Event is one server-sent event, a plain value; the zero Event is an unnamed
// event with empty data.
type Event struct {
	// Name is the event's "event" field ("message_start", "error"); empty
	// when it has none (an SSE client calls that "message", and OpenAI's
	// Chat Completions stream sends only such events).
	Name string
	// Data is the event's data lines joined by "\n".
	Data string
}

// FirstEvent reads server-sent events from body until the first complete
// event that is not a ping (an event named "ping") and returns it, with a
// body that yields everything read followed by the rest of body, and whose
// Close closes body. Comment lines and events without data are skipped.
// A Transport uses it to see an "event: error" that arrives before any
// content, when the attempt can still be retried as if it had failed with a
// status.
//
// FirstEvent reads at most limit bytes. It returns ErrNoEvent if they hold no
// such event, io.ErrUnexpectedEOF if the stream ends first, and the body's
// error if reading fails; in every case the returned body replays what was
// read (then the error, if reading failed) and must be closed.
func FirstEvent(body io.ReadCloser, limit int) (Event, io.ReadCloser, error) {
	if limit <= 0 {
		return Event{}, body, ErrNoEvent
	}
	var c sseCapture
	s := sseScanner{capture: &c}
	buf := make([]byte, 0, min(limit, 4<<10))
	empty := 0
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		start := len(buf)
		n, err := body.Read(buf[start:min(cap(buf), limit)])
		buf = buf[:start+n]
		found := s.feed(buf[start:]) > 0
		switch {
		case found:
			replay, _ := replayBody(buf, body, err)
			return c.ev, replay, nil // whatever went wrong comes after the event
		case err != nil:
			replay, err := replayBody(buf, body, err)
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return Event{}, replay, err
		case n > 0:
			empty = 0
		case empty >= maxEmptyReads-1:
			replay, _ := replayBody(buf, body, nil)
			return Event{}, replay, io.ErrNoProgress
		default:
			empty++
		}
	}
	replay, _ := replayBody(buf, body, nil)
	return Event{}, replay, ErrNoEvent
}

// replayBody returns a body that yields buf and then what is left of body
// after a read that returned err: the rest of body if err is nil, the end of
// the stream if it is io.EOF (returned as nil), or err again otherwise.
func replayBody(buf []byte, body io.ReadCloser, err error) (*peekedBody, error) {
	b := &peekedBody{buf: buf, rest: body, closer: body}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		b.rest, err = nil, nil
	default:
		b.rest, b.err = nil, err
	}
	return b, err
}

// sseScanner follows a text/event-stream incrementally, byte chunk by byte
// chunk, as the WHATWG HTML "event stream interpretation" describes: lines end
// in CRLF, LF or CR; a line starting with ':' is a comment; "field: value"
// lines build an event, and a blank line dispatches it if it has data. Without
// capture it keeps only a few bytes of state (enough to tell an event named
// "ping"); with capture it also keeps the event's name and data, for
// FirstEvent.
type sseScanner struct {
	capture *sseCapture // nil: none
	st      uint8
	cr      bool // the last byte was a CR: a following LF ends no line
	bom     int  // bytes of a byte order mark seen; len(utf8BOM) when past it

	name    [5]byte // the field name, up to "event"
	nameLen int     // may exceed len(name): then the field is of no interest
	field   uint8

	ping    [4]byte // the event field's value, up to "ping"
	pingLen int

	hasData bool // the event has a data field
	isPing  bool // the event's name is "ping"
}

// sseCapture is what a capturing sseScanner keeps of the event it reads:
// apart, so that a scanner that keeps nothing (one in every body under an
// idle limit) is small.
type sseCapture struct {
	evName []byte
	data   []byte
	cur    []byte
	ev     Event
}

// Scanner states.
const (
	sseLineStart uint8 = iota
	sseName
	sseValueStart // after the colon: one space may follow
	sseValue
	sseSkip // a comment, or a line of no interest
)

// Fields of interest.
const (
	fieldOther uint8 = iota
	fieldEvent
	fieldData
)

// feed scans p and returns how many events with content it completed. With
// capture it stops at the first one and leaves it in s.capture.ev.
func (s *sseScanner) feed(p []byte) int {
	// A UTF-8 byte order mark at the start of the stream is dropped.
	for s.bom < len(utf8BOM) && len(p) > 0 {
		if p[0] != utf8BOM[s.bom] {
			partial := utf8BOM[:s.bom]
			s.bom = len(utf8BOM)
			s.scan(partial) // no line ends in it: it dispatches nothing
			break
		}
		s.bom++
		p = p[1:]
	}
	return s.scan(p)
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// scan is feed after the byte order mark.
func (s *sseScanner) scan(p []byte) int {
	dispatched := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\n' && s.cr {
			s.cr = false
			continue
		}
		s.cr = c == '\r'
		if c == '\r' || c == '\n' {
			if s.endLine() {
				dispatched++
				if s.capture != nil {
					return dispatched
				}
			}
			continue
		}
		switch s.st {
		case sseLineStart:
			if c == ':' {
				s.st = sseSkip
				continue
			}
			s.nameLen = 0
			s.addName(c)
			s.st = sseName
		case sseName:
			if c == ':' {
				s.startValue()
				s.st = sseValueStart
				continue
			}
			s.addName(c)
		case sseValueStart, sseValue:
			if s.st == sseValueStart {
				s.st = sseValue
				if c == ' ' {
					continue
				}
			}
			j := indexEOL(p[i:])
			if j < 0 {
				j = len(p) - i
			}
			s.addValue(p[i : i+j])
			i += j - 1
		case sseSkip:
			j := indexEOL(p[i:])
			if j < 0 {
				return dispatched
			}
			i += j - 1
		}
	}
	return dispatched
}

func indexEOL(p []byte) int {
	for i, c := range p {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

func (s *sseScanner) addName(c byte) {
	if s.nameLen < len(s.name) {
		s.name[s.nameLen] = c
	}
	if s.nameLen <= len(s.name) {
		s.nameLen++
	}
}

// startValue decides which field the line is, at its colon or its end.
func (s *sseScanner) startValue() {
	s.field = fieldOther
	switch string(s.name[:min(s.nameLen, len(s.name))]) {
	case "event":
		if s.nameLen == 5 {
			s.field = fieldEvent
		}
	case "data":
		if s.nameLen == 4 {
			s.field = fieldData
		}
	}
	s.pingLen = 0
	if s.capture != nil {
		s.capture.cur = s.capture.cur[:0]
	}
}

func (s *sseScanner) addValue(v []byte) {
	switch {
	case s.field == fieldEvent:
		for _, c := range v {
			if s.pingLen < len(s.ping) {
				s.ping[s.pingLen] = c
			}
			if s.pingLen <= len(s.ping) {
				s.pingLen++
			}
		}
	case s.field != fieldData || s.capture == nil:
		return
	}
	if c := s.capture; c != nil {
		c.cur = append(c.cur, v...)
	}
}

// endLine ends the current line and reports whether it dispatched an event
// with content.
func (s *sseScanner) endLine() bool {
	st := s.st
	s.st = sseLineStart
	switch st {
	case sseLineStart:
		return s.dispatch()
	case sseSkip:
		return false
	case sseName:
		s.startValue() // a field with no colon has an empty value
	}
	switch s.field {
	case fieldEvent:
		s.isPing = s.pingLen == len(s.ping) && string(s.ping[:]) == "ping"
		if c := s.capture; c != nil {
			c.evName = append(c.evName[:0], c.cur...)
		}
	case fieldData:
		s.hasData = true
		if c := s.capture; c != nil {
			c.data = append(c.data, c.cur...)
			c.data = append(c.data, '\n')
		}
	}
	return false
}

// dispatch ends an event at a blank line and reports whether it had content.
func (s *sseScanner) dispatch() bool {
	content := s.hasData && !s.isPing
	if c := s.capture; c != nil {
		if content {
			c.ev = Event{Name: string(c.evName), Data: string(c.data[:len(c.data)-1])}
		}
		c.evName, c.data = c.evName[:0], c.data[:0]
	}
	s.hasData, s.isPing = false, false
	return content
}

// SlowStream says when a response body is slow, for a Transport to report
// it to the circuit breaker of the attempt that produced it (see
// Transport.SlowStream). Slowness is a failure signal only where the user
// says so: every zero field judges nothing, and the zero SlowStream is off.
//
// Time is the time the body spent answering: the wait for the response
// headers, then only the time the reader spent blocked in Read waiting for
// the dependency. The time a reader spends between reads (on its own work,
// or not reading at all) does not count, so a slow consumer never makes a
// stream look slow; data that arrived while it was busy is read at once
// and counts as fast. The meter errs toward not judging slow.
//
// A breaker with a SlowCallThreshold also judges each attempt by its
// latency, which for a Transport ends with its outcome: at the headers
// (and, with the stream check, the first event). A stream whose first
// event comes later than both that threshold and FirstByte is then
// counted slow twice. For a breaker that sees streams, judge their start
// one way only: FirstByte with no SlowCallThreshold, or the threshold
// with no FirstByte (the floors judge what comes after either way).
type SlowStream struct {
	// FirstByte: a body whose first content arrives more than this after
	// its attempt was sent is slow (time to first byte; for a
	// text/event-stream, time to the first content event, pings and
	// comments excluded, as for the idle timeout). A body that fails with
	// nothing delivered after more than this is slow as well. Zero: time
	// to first content is not judged.
	FirstByte time.Duration
	// MinBytesPerSecond: a body whose content, once begun, arrives at
	// fewer bytes per second than this over a Window of waiting is slow
	// (bytes as they arrive, framing included: for a text/event-stream the
	// event names and the JSON around each delta, and its pings). Zero:
	// not judged.
	MinBytesPerSecond float64
	// MinEventsPerSecond: a text/event-stream whose content events (pings
	// and comments excluded), once begun, arrive at fewer per second than
	// this over a Window is slow. A model API sends about one content
	// event per token or few tokens (a delta), so this is the nearest a
	// Transport comes to tokens per second without parsing the events;
	// the stream's own usage figures are the caller's to read. Other
	// bodies are not judged by it. Zero: not judged.
	MinEventsPerSecond float64
	// Window is the waiting time over which throughput is judged, from
	// the first content on: the floors are checked at the end of every
	// Window of time blocked in Read (tumbling, not sliding), never over
	// the first few bytes. A body whose content is all read within one
	// Window is judged by FirstByte alone. Zero means
	// DefaultSlowStreamWindow.
	Window time.Duration
}

// DefaultSlowStreamWindow is the throughput window of a SlowStream whose
// Window is zero: long enough that one late chunk does not make a stream
// slow, short enough to judge an answer of a few seconds.
const DefaultSlowStreamWindow = 5 * time.Second

// on reports whether s judges anything.
func (s *SlowStream) on() bool {
	return s.FirstByte > 0 || s.MinBytesPerSecond > 0 || s.MinEventsPerSecond > 0
}

// slowRecorder is a breaker that takes slow reports for calls it already
// counted (package breaker's Breaker is one).
type slowRecorder interface {
	RecordSlowAt(now time.Time)
}

// slowMeter measures a response body as it is read (by the Transport, or
// by the caller) and reports it, at most once, to the breakers of the
// attempt that produced it when it is slow to start or slow to flow. It
// is the innermost wrapper of the body, so it sees every byte whoever
// reads it. It starts no goroutine and no timer: the slowness is judged
// as reads return.
type slowMeter struct {
	io.ReadCloser
	cfg  SlowStream
	to   [2]slowRecorder // the policy's breaker, the target's; nil: none
	sse  bool
	scan sseScanner

	// Owned by Read.
	waited   time.Duration // to the first content: header wait and Read time
	began    bool          // the first content arrived
	winWait  time.Duration // Read time in the current throughput window
	winBytes int64
	winEvs   int
	done     bool // reported, or nothing more to judge
}

// newSlowMeter wraps body, whose headers took headers to arrive; to holds
// the breakers to report to.
func newSlowMeter(body io.ReadCloser, cfg SlowStream, headers time.Duration, sse bool, to [2]slowRecorder) *slowMeter {
	if cfg.Window <= 0 {
		cfg.Window = DefaultSlowStreamWindow
	}
	if !sse {
		cfg.MinEventsPerSecond = 0
	}
	return &slowMeter{ReadCloser: body, cfg: cfg, to: to, sse: sse, waited: headers}
}

func (m *slowMeter) Read(p []byte) (int, error) {
	if m.done {
		return m.ReadCloser.Read(p)
	}
	start := time.Now()
	n, err := m.ReadCloser.Read(p)
	end := time.Now()
	d := end.Sub(start)
	events := 0
	if n > 0 && m.sse {
		events = m.scan.feed(p[:n])
	}
	if !m.began {
		m.waited += d
		if n > 0 && (!m.sse || events > 0) {
			m.began = true
			if m.cfg.FirstByte > 0 && m.waited > m.cfg.FirstByte {
				m.report(end)
			} else if m.cfg.MinBytesPerSecond == 0 && m.cfg.MinEventsPerSecond == 0 {
				m.done = true // judged: in time, and no floor to watch
			}
			return n, err
		}
		if err != nil && !errors.Is(err, io.EOF) && !cancelled(err) && m.cfg.FirstByte > 0 && m.waited > m.cfg.FirstByte {
			m.report(end)
		}
		return n, err
	}
	m.winWait += d
	m.winBytes += int64(n)
	m.winEvs += events
	if m.winWait >= m.cfg.Window && !cancelled(err) {
		secs := m.winWait.Seconds()
		if m.cfg.MinBytesPerSecond > 0 && float64(m.winBytes) < m.cfg.MinBytesPerSecond*secs ||
			m.cfg.MinEventsPerSecond > 0 && float64(m.winEvs) < m.cfg.MinEventsPerSecond*secs {
			m.report(end)
		}
		m.winWait, m.winBytes, m.winEvs = 0, 0, 0
	}
	return n, err
}

// report tells the attempt's breakers the call was slow, once.
func (m *slowMeter) report(now time.Time) {
	m.done = true
	for _, b := range m.to {
		if b != nil {
			b.RecordSlowAt(now)
		}
	}
}

// cancelled reports a read ended by a context: the caller gave up, a hedge
// was decided, or the attempt ran out of time (a failure recorded as such),
// none of which says how fast the dependency sends.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
