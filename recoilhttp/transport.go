package recoilhttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/hop"
)

// MaxDrain bounds how much of a discarded response body is read before it is
// closed: enough for the connection to be reused after an ordinary error
// body, not so much that a huge one holds the retry up.
const MaxDrain = 64 << 10

// Transport is an http.RoundTripper that retries under a recoil.Policy,
// classifying each attempt like a careful engineer (see Classify). Use it as
// an http.Client's Transport, or under a model API's official SDK through its
// WithHTTPClient option (with the SDK's own retries set to 0).
//
// Each attempt after the first sends a copy of req with a header map of its
// own and a fresh body from GetBody; the first is sent as it is when nothing
// needs adding to it. The caller's request is never modified (the copy
// shares the URL and the header values, which no RoundTripper writes). A body that cannot be replayed (no
// GetBody) gets one attempt, and the verdict says why. A discarded response
// is drained (at most MaxDrain) and closed so its connection is reused. When
// a response arrived, RoundTrip returns it with a nil error, as the
// RoundTripper contract asks — also when retries ran out; only when the last
// attempt produced no response does it return an error (a *recoil.Error).
//
// Only idempotent methods (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) and
// requests with an Idempotency-Key or X-Idempotency-Key header are retried
// once they may have reached the server; others are retried only when
// nothing was sent (a refused connection) unless the caller opts in, per
// request with AllowRetry or per host with RetryNonIdempotent.
//
// The zero Transport is usable: http.DefaultTransport, a default policy of
// its own (with its own retry budget), no per-attempt timeout. A Transport is
// safe for concurrent use; do not change its fields after first use, and do
// not copy it.
type Transport struct {
	// Base sends each attempt; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Policy decides; nil means the Transport's own zero Policy, whose budget
	// is shared by every request through this Transport. The policy's
	// Classify is not used: HTTP attempts are classified by Classify (or the
	// Transport's Classify field).
	Policy *recoil.Policy
	// Classify, if set, is asked first; a zero Verdict falls through to the
	// package's Classify.
	Classify func(req *http.Request, resp *http.Response, err error) recoil.Verdict
	// AttemptTimeout bounds each attempt until its response headers arrive,
	// separately from the request's own deadline; zero means none.
	AttemptTimeout time.Duration
	// RetryNonIdempotent reports whether a request with a non-idempotent
	// method (a POST) may be retried after it may have reached the server
	// (per host, say); nil means no. AllowRetry opts in one request.
	RetryNonIdempotent func(*http.Request) bool
	// IdempotencyKey, if true, gives each logical request with a
	// non-idempotent method and no key an Idempotency-Key header, the same on
	// every attempt, so a server that honours keys runs it at most once. Such
	// a request may then be retried.
	IdempotencyKey bool
	// IdleTimeout, if positive, fails a response body with an *IdleError
	// when no bytes arrive for that long (for text/event-stream, no content
	// event: pings and comments do not count) — an inactivity limit that
	// never cuts off a slow stream that keeps arriving (seed 002).
	IdleTimeout time.Duration
	// NoStreamCheck turns off reading the first event of a text/event-stream
	// response before returning it. With the check on, an "event: error"
	// that arrives before any content is a failed attempt, retried like a
	// status; after content, failures reach the reader as *StreamError.
	NoStreamCheck bool
	// Hop, if true, sends the hop protocol's headers on every attempt: the
	// remaining retry budget for the call tree, the remaining deadline and
	// the attempt number (package hop; docs/hop-protocol.md). Whether or not
	// it is set, a request whose context carries a hop.Account (Middleware
	// puts one there) spends its retries from that account and subtracts the
	// retries that responses report as spent below.
	Hop bool
	// EdgeBudget is the retry budget for the whole call tree when a request
	// arrives without one and Hop is set; zero means the policy's
	// MaxAttempts-1, negative means zero.
	EdgeBudget int
	// Observe receives one Summary per logical request; nil means none.
	Observe func(Summary)

	own     recoil.Policy
	stacked atomic.Bool // a stacked retry layer has been reported
}

// Summary is the one report of a logical HTTP request: the core Summary plus
// the method, host and last status, the provider's own error message (the
// validator's complaint about the exact field), and a note when a second
// retry layer was found above or below this one.
type Summary struct {
	recoil.Summary
	// Method and Host are the request's.
	Method, Host string
	// Status is the last response's status code; zero if none arrived.
	Status int
	// Provider is the provider's error message from the last failure.
	Provider string
	// Note reports, once per Transport, a stacked retry layer ("two retry
	// layers: attempts multiply").
	Note string
}

type allowRetryKey struct{}

// AllowRetry returns a context that opts the requests made with it into
// retrying even when their method is not idempotent: the caller vouches that
// running them twice is harmless.
func AllowRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, allowRetryKey{}, true)
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

func (t *Transport) policy() *recoil.Policy {
	if t.Policy != nil {
		return t.Policy
	}
	return &t.own
}

// idempotentMethod reports the methods RFC 9110 defines as idempotent.
func idempotentMethod(m string) bool {
	switch m {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// attempt is what one attempt's classification needs to know of the request.
type request struct {
	orig       *http.Request
	replayable bool
	mayRepeat  bool   // may run twice: idempotent, keyed, or opted in
	key        string // generated idempotency key, if any
	acct       *hop.Account
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	p := t.policy()
	r := request{
		orig:       req,
		replayable: req.Body == nil || req.Body == http.NoBody || req.GetBody != nil,
		mayRepeat:  idempotentMethod(req.Method) || hasIdempotencyKey(req),
		acct:       hop.AccountFrom(ctx),
	}
	if !r.mayRepeat && t.IdempotencyKey {
		r.key = newKey()
		r.mayRepeat = true
	}
	if !r.mayRepeat && (ctx.Value(allowRetryKey{}) != nil || (t.RetryNonIdempotent != nil && t.RetryNonIdempotent(req))) {
		r.mayRepeat = true
	}
	if r.acct == nil && t.Hop {
		b := t.EdgeBudget
		if b == 0 {
			b = max(p.MaxAttempts, 1) - 1
			if p.MaxAttempts == 0 {
				b = recoil.DefaultMaxAttempts - 1
			}
		}
		r.acct = hop.NewAccount(max(b, 0))
	}
	note := t.stackedNote(req)

	deadline, _ := ctx.Deadline()
	var none time.Time
	c := p.Begin(none, deadline)
	if r.acct != nil {
		c.SetRequestBudget(accountBudget{r.acct})
	}
	var (
		resp    *http.Response
		lastErr error
		status  int
		prov    string
	)
	for {
		if err := c.Start(none); err != nil {
			t.report(&c, req, status, prov, note)
			return nil, err
		}
		resp, lastErr = t.attempt(ctx, &r, c.Attempts())
		if ctx.Err() != nil { // the caller gave up: no retry, whatever happened
			c.Abort(none, context.Cause(ctx))
			if resp != nil { // a response arrived: hand it over as it is
				t.report(&c, req, resp.StatusCode, "", note)
				return resp, nil
			}
			t.report(&c, req, status, prov, note)
			return nil, context.Cause(ctx)
		}
		v, failure := t.classify(&r, resp, lastErr)
		if failure == nil {
			c.Success(none)
			t.report(&c, req, resp.StatusCode, "", note)
			return t.wrapBody(resp), nil
		}
		if resp != nil {
			status = resp.StatusCode
			if se, ok := failure.(*StatusError); ok {
				prov = se.Provider.Message
			}
		}
		wait, stop := c.FailVerdict(none, failure, v)
		if stop != nil {
			t.report(&c, req, status, prov, note)
			if resp != nil {
				return t.wrapBody(resp), nil
			}
			return nil, stop
		}
		discard(resp)
		if c.Wait(ctx, wait) != nil {
			c.Abort(none, context.Cause(ctx))
			t.report(&c, req, status, prov, note)
			return nil, context.Cause(ctx)
		}
	}
}

// attempt sends attempt n of r.
func (t *Transport) attempt(ctx context.Context, r *request, n int) (*http.Response, error) {
	req := r.orig
	touch := n > 1 || r.key != "" || t.Hop || t.AttemptTimeout > 0
	if !touch {
		return t.base().RoundTrip(req)
	}
	var cancel context.CancelFunc
	var stopTimer func() bool
	if t.AttemptTimeout > 0 {
		ctx, cancel = context.WithCancel(ctx)
		tm := time.AfterFunc(t.AttemptTimeout, func() { cancel() })
		stopTimer = tm.Stop
	}
	// A shallow copy with a header map of its own: the caller's request and
	// header map stay untouched, and values are shared, never written.
	out := req.WithContext(ctx)
	out.Header = make(http.Header, len(req.Header)+4)
	for k, v := range req.Header {
		out.Header[k] = v
	}
	if n > 1 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			if cancel != nil {
				cancel()
			}
			return nil, err
		}
		out.Body = body
	}
	if r.key != "" {
		out.Header["Idempotency-Key"] = []string{r.key}
	}
	if t.Hop && r.acct != nil {
		h := hop.Request{Budget: r.acct.Remaining(), HasBudget: true, Attempt: n}
		if dl, ok := ctx.Deadline(); ok {
			h.Deadline, h.HasDeadline = max(time.Until(dl), 0), true
		}
		if t.AttemptTimeout > 0 && (!h.HasDeadline || h.Deadline > t.AttemptTimeout) {
			h.Deadline, h.HasDeadline = t.AttemptTimeout, true
		}
		h.WriteHeader(out.Header)
	}
	resp, err := t.base().RoundTrip(out)
	if cancel != nil {
		fired := !stopTimer()
		switch {
		case fired:
			// The attempt ran out of time; a response that raced the timer
			// is dropped, so the attempt counts as the timeout it was.
			discard(resp)
			resp, err = nil, context.DeadlineExceeded
			cancel()
		case resp != nil:
			// Headers arrived in time: the attempt timeout no longer applies,
			// and the context lives until the body is closed.
			resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		default:
			cancel()
		}
	}
	return resp, err
}

// classify returns the verdict on an attempt and, when it failed, the error
// to record it with (nil for a success).
func (t *Transport) classify(r *request, resp *http.Response, err error) (recoil.Verdict, error) {
	if resp != nil && r.acct != nil {
		if h, perr := hop.ParseResponse(resp.Header); perr == nil && h.Spent > 0 {
			r.acct.Below(h.Spent)
		}
	}
	var v recoil.Verdict
	var failure error
	if t.Classify != nil {
		v = t.Classify(r.orig, resp, err)
	}
	switch {
	case v.Class != recoil.ClassUnknown:
		failure = err
		if resp != nil && failure == nil {
			failure = &StatusError{StatusCode: resp.StatusCode}
		}
	case resp == nil:
		v, failure = classifyError(r.orig, err), err
	case resp.StatusCode >= 400:
		var se *StatusError
		v, se = classifyStatus(r.orig, resp, time.Now())
		failure = se
	case !t.NoStreamCheck && isEventStream(resp):
		v, failure = t.streamStart(resp)
	default:
		return recoil.Verdict{}, nil
	}
	if failure == nil || !v.Class.Retryable() {
		return v, failure
	}
	// The class says retry; the request must allow it.
	switch {
	case !r.replayable:
		v.Class, v.Code = recoil.ClassPermanent, CodeNotReplayable
		v.Reason += "; not retried: the request body cannot be replayed (no GetBody)"
	case !r.mayRepeat && (resp != nil || v.MayHaveExecuted):
		v.Class, v.Code = recoil.ClassPermanent, CodeNotIdempotent
		v.Reason += "; not retried: " + r.orig.Method + " may have run and has no idempotency key (opt in with AllowRetry or RetryNonIdempotent)"
	}
	return v, failure
}

// streamStart reads a text/event-stream response up to its first event
// (under the idle limit, which it applies to the body from here on). An
// "event: error", or a stream that fails or ends before any event, is a
// failed attempt that may be retried; after content has been delivered to
// the caller, no retry is possible and failures reach the reader as
// *StreamError.
func (t *Transport) streamStart(resp *http.Response) (recoil.Verdict, error) {
	if t.IdleTimeout > 0 {
		resp.Body = SSEIdleBody(resp.Body, t.IdleTimeout)
	}
	ev, body, err := FirstEvent(resp.Body, MaxErrorBody)
	resp.Body = &wrapped{body}
	switch {
	case err == nil && ev.Name == "error":
		pe, _, _ := ParseErrorBody([]byte(ev.Data))
		v := recoil.Verdict{Class: recoil.ClassTransient, MayHaveExecuted: true, Code: CodeStreamError, Reason: "stream error before any content: " + describe(pe, "event: error")}
		if pe.Type == "overloaded_error" {
			v.Class = recoil.ClassOverloaded
		}
		return v, &StatusError{StatusCode: resp.StatusCode, Provider: pe, JSON: true}
	case err == nil, errors.Is(err, ErrNoEvent):
		return recoil.Verdict{}, nil
	default:
		v := recoil.Verdict{Class: recoil.ClassTransient, MayHaveExecuted: true, Code: CodeStreamError, Reason: "stream failed before any content: " + err.Error()}
		var idle *IdleError
		if errors.As(err, &idle) {
			v.Timeout = true
		}
		return v, err
	}
}

// wrapped marks a body the Transport has already wrapped.
type wrapped struct{ io.ReadCloser }

// wrapBody applies the idle limit to a body handed to the caller.
func (t *Transport) wrapBody(resp *http.Response) *http.Response {
	if t.IdleTimeout <= 0 || resp.Body == nil || resp.Body == http.NoBody {
		return resp
	}
	if _, ok := resp.Body.(*wrapped); ok {
		return resp
	}
	if isEventStream(resp) {
		resp.Body = SSEIdleBody(resp.Body, t.IdleTimeout)
	} else {
		resp.Body = IdleBody(resp.Body, t.IdleTimeout)
	}
	return resp
}

// report sends the summary of a finished request to Observe.
func (t *Transport) report(c *recoil.Call, req *http.Request, status int, prov, note string) {
	if t.Observe == nil {
		return
	}
	t.Observe(Summary{Summary: c.Summary(time.Time{}), Method: req.Method, Host: req.URL.Host, Status: status, Provider: prov, Note: note})
}

// stackedNote reports, once per Transport, a retry layer stacked on this
// one: an SDK above that retries (X-Stainless-Retry-Count above 0), an
// outer recoil Transport (its attempt header already on the request), or a
// recoil Transport below as Base.
func (t *Transport) stackedNote(req *http.Request) string {
	var what string
	switch {
	case req.Header.Get("X-Stainless-Retry-Count") != "" && req.Header.Get("X-Stainless-Retry-Count") != "0":
		what = "the SDK above retries too (X-Stainless-Retry-Count " + req.Header.Get("X-Stainless-Retry-Count") + ")"
	case req.Header.Get(hop.HeaderAttempt) != "":
		what = "an outer recoil layer retries too (" + hop.HeaderAttempt + " is already set)"
	default:
		if _, ok := t.Base.(*Transport); ok {
			what = "the Base transport is a recoil Transport that retries too"
		}
	}
	if what == "" || !t.stacked.CompareAndSwap(false, true) {
		return ""
	}
	return "two retry layers: attempts multiply; " + what
}

func isEventStream(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// discard drains (at most MaxDrain) and closes a response the caller will
// not see, so its connection can be reused.
func discard(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, resp.Body, MaxDrain)
	_ = resp.Body.Close()
}

// cancelBody releases an attempt's context when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// accountBudget spends the hop protocol's per-request retry budget.
type accountBudget struct{ a *hop.Account }

func (b accountBudget) AdmitAt(time.Time) bool               { return true }
func (b accountBudget) RetryAt(time.Time, budget.Cause) bool { return b.a.TrySpend() }
func (b accountBudget) RecordAt(time.Time, budget.Outcome)   {}

// newKey returns a random idempotency key.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "recoil-" + hex.EncodeToString(b[:])
}

// ModelAPI returns a Transport for a model provider's API (base nil means
// http.DefaultTransport), for use under the provider's SDK with its own
// retries off. Generation calls are POSTs and are billed per attempt (seed
// 002), so the preset retries them only under an Idempotency-Key it
// generates, the same on every attempt of a logical request — providers that
// honour keys run it once — and under its own retry budget, which stops
// retries when failures are sustained. Streams fail after 15 s without a
// content event (seed 002's inactivity timeout); pings do not count.
// Attempts, waits and Retry-After follow the default policy: 3 attempts,
// full jitter, server waits honoured up to 60 s.
func ModelAPI(base http.RoundTripper) *Transport {
	return &Transport{Base: base, IdempotencyKey: true, IdleTimeout: 15 * time.Second}
}

// SlogObserver returns an Observe function that writes each request's
// Summary as one log line to l (nil means nothing is written): the core
// summary's attributes (recoil.Summary.Attrs) with method, host, status,
// the provider's message and any note.
func SlogObserver(l *slog.Logger) func(Summary) {
	if l == nil {
		return func(Summary) {}
	}
	return func(s Summary) {
		ctx := context.Background()
		level := s.Level()
		if s.Note != "" {
			level = max(level, slog.LevelWarn)
		}
		if !l.Enabled(ctx, level) {
			return
		}
		attrs := append(s.Attrs(), slog.String("method", s.Method), slog.String("host", s.Host))
		if s.Status != 0 {
			attrs = append(attrs, slog.Int("status", s.Status))
		}
		if s.Provider != "" {
			attrs = append(attrs, slog.String("provider", s.Provider))
		}
		if s.Note != "" {
			attrs = append(attrs, slog.String("note", s.Note))
		}
		l.LogAttrs(ctx, level, s.Message(), attrs...)
	}
}
