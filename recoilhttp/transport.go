package recoilhttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
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
// It runs recoil's one retry loop (recoil.Drive), so every Policy field
// means here what it means in recoil.Do: MaxAttempts, the schedules,
// MaxServerWait, MinAttempt, Unknown, Classify (asked before the HTTP
// rules), the budget, Breaker, Limiter (a slot per attempt), Observe and
// OnAttempt. Timeout bounds the retry loop and AttemptTimeout each attempt,
// both until the response headers arrive: the body of the response
// RoundTrip returns is the caller's to read, and IdleTimeout (five minutes
// unless set) fails a read that waits on a peer that stopped sending.
// SlowStream, if set, reports a body slow to start or slow to flow to the
// attempt's circuit breaker, so slowness can trip it.
//
// Each attempt after the first sends a copy of req with a header map of its
// own and a fresh body from GetBody; the first is sent as it is when nothing
// needs adding to it. The caller's request is never modified (the copy
// shares the URL and the header values, which no RoundTripper writes). A body that cannot be replayed (no
// GetBody) gets one attempt, and the verdict says why. A discarded response
// is drained (at most MaxDrain) and closed so its connection is reused. When
// a response arrived, RoundTrip returns it with a nil error, as the
// RoundTripper contract asks — also when retries ran out, or when the loop
// stopped before a later attempt (an open breaker, a refused wait) — and
// the request body is closed exactly once on every path. Only when no
// response is in hand does it return an error (a *recoil.Error, or the
// context's cause). A response the loop stopped on after refusing the
// server's wait carries that wait in its RefusedWaitHeader, so a caller
// behind an SDK can still learn when to come back (see RefusedWait).
//
// Under a policy whose Budget charges by cost (a recoil.CostBudget: a
// budget.Rate, a fleet.Guard), each attempt is charged the cost the
// request's context carries (recoil.WithCost) or, when it carries none,
// EstimateTokens of its body (read through GetBody, up to 1 MiB); the
// usage the successful response reports (ParseUsage: in a JSON body, or in
// a stream's events) settles the charge once the caller has read it.
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
	// Classify sees each failure's error first (a *StatusError when a
	// response arrived); a zero Verdict falls through to the Transport's
	// Classify field and then to the package's rules.
	Policy *recoil.Policy
	// Classify, if set, is asked after the policy's Classify, with the
	// request and the response; a zero Verdict falls through to the
	// package's Classify.
	Classify func(req *http.Request, resp *http.Response, err error) recoil.Verdict
	// RetryNonIdempotent reports whether a request with a non-idempotent
	// method (a POST) may be retried after it may have reached the server
	// (per host, say); nil means no. AllowRetry opts in one request.
	RetryNonIdempotent func(*http.Request) bool
	// IdempotencyKey, if true, gives each logical request with a
	// non-idempotent method and no key an Idempotency-Key header, the same on
	// every attempt, so a server that honours keys runs it at most once. Such
	// a request may then be retried.
	IdempotencyKey bool
	// IdleTimeout fails a response body with an *IdleError when no bytes
	// arrive for that long (for text/event-stream, no content event: pings
	// and comments do not count) — an inactivity limit that never cuts off
	// a slow stream that keeps arriving. Zero means DefaultIdleTimeout, so
	// that no read of a body the Transport returns can block for ever on a
	// peer that stopped sending; NoIdleTimeout (any negative value) turns
	// the limit off, for a caller that bounds every read itself.
	IdleTimeout time.Duration
	// NoStreamCheck turns off reading the first event of a text/event-stream
	// response before returning it. With the check on, an error that
	// arrives before any content — an "event: error", or an unnamed event
	// whose data is {"error": …}, as Chat Completions streams send it — is a
	// failed attempt, retried like a status; after content, failures reach
	// the reader as *StreamError.
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
	// MaxAttempts-1, negative means zero (hop.EdgeBudget).
	EdgeBudget int
	// Observe receives one Summary per logical request, with the request's
	// context; nil means none. The policy's Observe, if set, receives the
	// core Summary as well.
	Observe func(context.Context, Summary)
	// SlowStream, if it judges anything, measures the body of every
	// successful response (status below 400) as it is read — time to first
	// content, and bytes or content events per second — and reports a body
	// it finds slow, once, to the circuit breaker of the attempt that
	// produced it: the policy's Breaker and, under a Fallback, the target's
	// Breaker, each if it takes slow reports (a RecordSlowAt(time.Time)
	// method, as package breaker's Breaker has; with a SlowCallRate set,
	// slow reports can trip it). The attempt's outcome is recorded as
	// always, when its headers (or a stream's first event) arrive; the
	// report marks that call slow as well. A body is judged only as it is
	// read, and a read ended by a context is never judged. The idle
	// timeout is unaffected. The zero SlowStream (the default) measures
	// nothing and costs nothing.
	SlowStream SlowStream

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

// IdempotentMethod reports whether m is a method RFC 9110 defines as
// idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE), the empty method
// (GET, for net/http) included: a request that running twice leaves as
// running once. The Transport retries others only under an idempotency key
// or an opt-in.
func IdempotentMethod(m string) bool {
	switch m {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// request is one logical request: the driver of its attempts for
// recoil.Drive, and what classifying them needs to know of it.
type request struct {
	t          *Transport
	orig       *http.Request
	replayable bool
	mayRepeat  bool   // may run twice: idempotent, keyed, or opted in
	keyed      bool   // carries an idempotency key, the caller's or generated
	key        string // generated idempotency key, if any
	acct       *hop.Account
	hedged     bool // attempts may run at once (a Hedge on a request that may repeat)
	answered   bool // the last attempt produced a response
	status     int  // the last response's status
	provider   string
	note       string
	// Under a policy with a Fallback: the first target's endpoint, and
	// the request's body when the Transport read it (to replay or rewrite
	// it; bodyMu guards reading it, which hedges to one target may race).
	first    *Endpoint
	body     []byte
	bodyMu   sync.Mutex
	buffered bool // the body was read: every attempt sends a copy
	origSent bool // attempt 1 was handed the caller's own body (only attempt 1 writes it)
}

// RoundTrip implements http.RoundTripper: it runs the one retry loop
// (recoil.Drive) with the request as its driver.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	p := t.policy()
	r := requests.Get().(*request)
	*r = request{
		t:          t,
		orig:       req,
		replayable: req.Body == nil || req.Body == http.NoBody || req.GetBody != nil,
		keyed:      hasIdempotencyKey(req),
	}
	r.mayRepeat = IdempotentMethod(req.Method) || r.keyed
	if !r.mayRepeat && t.IdempotencyKey {
		r.key = newKey()
		r.mayRepeat, r.keyed = true, true
	}
	if !r.mayRepeat && (ctx.Value(allowRetryKey{}) != nil || (t.RetryNonIdempotent != nil && t.RetryNonIdempotent(req))) {
		r.mayRepeat = true
	}
	r.hedged = p.Hedge != nil && r.MayHedge()
	r.acct = hop.AccountFrom(ctx) // the Middleware's, serving the request this one is for
	if r.acct == nil && t.Hop {
		r.acct = hop.NewAccount(hop.EdgeBudget(t.EdgeBudget, p.MaxRetries()))
	}
	r.note = t.stackedNote(req)
	if p.Fallback != nil {
		if err := r.prepareRoutes(p.Fallback); err != nil {
			*r = request{}
			requests.Put(r)
			return nil, err
		}
	}
	ctx, cb, cost := r.cost(p, ctx)
	resp, err := recoil.Drive(ctx, p, r)
	closeBody := !r.origSent && !r.buffered
	*r = request{} // hold nothing of the request's while pooled
	requests.Put(r)
	if closeBody && req.Body != nil {
		// No attempt handed Base the caller's body, which it would have closed.
		_ = req.Body.Close()
	}
	switch re, stopped := err.(*recoil.Error); {
	case resp == nil:
		return nil, err
	case err != nil && !stopped:
		// The caller gave up: no answer is wanted, least of all a stale one.
		discard(resp)
		return nil, err
	case stopped && re.RefusedWait > 0:
		resp.Header.Set(RefusedWaitHeader, formatSeconds(re.RefusedWait))
	}
	// A response arrived and the loop stopped on it: the caller gets it,
	// unread, with a nil error (the RoundTripper contract).
	resp = t.wrapBody(resp)
	if cb != nil && err == nil {
		settleBody(resp, cb, cost) // the usage it reports settles the charge
	}
	return resp, nil
}

// requests recycles the drivers of logical requests, which escape to the
// heap through recoil.Drive: the healthy path then allocates nothing of
// the Transport's own.
var requests = sync.Pool{New: func() any { return new(request) }}

// RefusedWaitHeader is set on a response RoundTrip returns after the loop
// refused the server's wait (longer than MaxServerWait, or past the
// deadline): the wait in seconds, as Retry-After writes it, with up to
// three decimals. The response's own headers say what the server asked;
// this says that recoil stopped over it.
const RefusedWaitHeader = "Recoil-Refused-Wait"

// RefusedWait reports the wait RoundTrip refused before returning resp, from
// its RefusedWaitHeader: a caller behind an SDK finds resp in the SDK's
// error and learns when the work may be requeued.
func RefusedWait(resp *http.Response) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	v := resp.Header.Get(RefusedWaitHeader)
	if v == "" {
		return 0, false
	}
	return parseDecimal(v, time.Second)
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64)
}

// RequestBudget returns the hop account the request's retries are spent
// from, if any: the one its context carries, or at an edge with Hop set
// one of its own.
func (r *request) RequestBudget() recoil.Budget {
	if r.acct == nil {
		return nil
	}
	return r.acct
}

// Attempt sends attempt n under ctx (the request's), cut off at deadline
// (until its response headers arrive, and then until the Transport's own
// reads of the response are done) when that comes before ctx's own
// deadline: the one cut-off, for the policy's AttemptTimeout and Timeout
// alike, since recoil.Drive derives no context. Under a Hedge, attempts
// run at once: each keeps its own state, and only attempt 1 sends the
// caller's own body.
func (r *request) Attempt(ctx context.Context, n int, deadline time.Time) (*http.Response, error) {
	return r.attempt(ctx, n, nil, nil, deadline)
}

// attempt is Attempt to the endpoint ep (nil: the request as its caller
// made it), whose target's breaker is tb (nil: none).
func (r *request) attempt(ctx context.Context, n int, ep *Endpoint, tb recoil.Breaker, deadline time.Time) (*http.Response, error) {
	t, req := r.t, r.orig
	cut := !deadline.IsZero()
	if dl, ok := ctx.Deadline(); ok && cut && !deadline.Before(dl) {
		cut = false // the request's own context already ends then
	}
	var sent time.Time // when the attempt was sent, if its body is to be metered
	if t.SlowStream.on() {
		sent = time.Now()
	}
	if !(n > 1 || r.key != "" || t.Hop || cut || ep != nil || r.buffered || r.hedged) {
		r.origSent = true
		resp, err := t.base().RoundTrip(req)
		return t.meter(resp, err, sent, tb), err
	}
	var cancel context.CancelFunc
	var stopTimer func() bool
	var tm, reads *time.Timer
	if cut {
		// Not a context deadline: once the headers are in and the
		// Transport's own reads are done (Verdict), the body is the
		// caller's to read for as long as it takes.
		ctx, cancel = context.WithCancel(ctx)
		tm = time.AfterFunc(time.Until(deadline), cancel)
		stopTimer = tm.Stop
	}
	// A shallow copy with a header map of its own: the caller's request and
	// header map stay untouched, and values are shared, never written.
	out := req.WithContext(ctx)
	out.Header = make(http.Header, len(req.Header)+4)
	for k, v := range req.Header {
		out.Header[k] = v
	}
	var err error
	own := false // out carries the caller's own body
	switch {
	case r.buffered:
		out.Body = io.NopCloser(bytes.NewReader(r.body))
	case n > 1 && req.GetBody != nil:
		out.Body, err = req.GetBody()
	default:
		own = req.Body != nil && req.Body != http.NoBody
	}
	if err == nil && ep != nil {
		var rewritten bool
		rewritten, err = r.route(out, ep, own)
		own = own && !rewritten
	}
	if own {
		r.origSent = true
	}
	if err != nil {
		if cancel != nil {
			stopTimer()
			cancel()
		}
		return nil, err
	}
	if r.key != "" {
		out.Header["Idempotency-Key"] = []string{r.key}
	}
	if t.Hop && r.acct != nil {
		h := hop.Request{Budget: r.acct.Remaining(), HasBudget: true, Attempt: n}
		if dl, ok := ctx.Deadline(); ok {
			h.Deadline, h.HasDeadline = max(time.Until(dl), 0), true
		}
		if cut && (!h.HasDeadline || time.Until(deadline) < h.Deadline) {
			h.Deadline, h.HasDeadline = max(time.Until(deadline), 0), true
		}
		h.WriteHeader(out.Header)
	}
	resp, err := t.base().RoundTrip(out)
	resp = t.meter(resp, err, sent, tb)
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
			// Headers arrived in time: the context lives until the body is
			// closed, and the cut-off stays armed until Verdict has done
			// the Transport's own reads of it (a trickling error body must
			// not hold the call past its deadline).
			cb := &cancelBody{ReadCloser: resp.Body, cancel: cancel}
			resp.Body = cb
			if left := time.Until(deadline); left > 0 {
				cb.reads = tm
				tm.Reset(left)
				reads = tm
			} else {
				cancel()
			}
		default:
			cancel()
		}
	}
	if err == nil && r.hedged && !t.NoStreamCheck && resp.StatusCode < 400 && isEventStream(resp) {
		// A hedged stream is decided on its first content: read it here,
		// in the attempt, so that a stream slow to start is raced.
		v, failure := t.streamStart(resp)
		if reads != nil { // the Transport's own reads are done
			reads.Stop()
		}
		resp.Body = &peeked{ReadCloser: resp.Body, v: v, failure: failure}
	}
	return resp, err
}

// meter puts a slow meter (see SlowStream) under the body of a successful
// response to an attempt sent at sent (zero: SlowStream is off), reporting
// to the policy's breaker and tb, the attempt's target's, those of them
// that take slow reports. It returns resp.
func (t *Transport) meter(resp *http.Response, err error, sent time.Time, tb recoil.Breaker) *http.Response {
	if sent.IsZero() || err != nil || resp == nil || resp.StatusCode >= 400 || resp.Body == nil || resp.Body == http.NoBody {
		return resp
	}
	// As for outcomes, each breaker the attempt asked hears of it: one set
	// as both the policy's and the target's hears twice.
	var to [2]slowRecorder
	to[0], _ = t.policy().Breaker.(slowRecorder)
	to[1], _ = tb.(slowRecorder)
	if to[0] == nil && to[1] == nil {
		return resp
	}
	resp.Body = newSlowMeter(resp.Body, t.SlowStream, time.Since(sent), isEventStream(resp), to)
	return resp
}

// peeked is the body of a hedged stream whose first event the attempt read
// (Transport.streamStart), with what it came to.
type peeked struct {
	io.ReadCloser
	v       recoil.Verdict
	failure error
}

// MayHedge reports whether the request may be hedged: run twice at once.
// Only a request that may be repeated (an idempotent method, an
// idempotency key, an opt-in) and whose body can be sent again may.
func (r *request) MayHedge() bool { return r.mayRepeat && r.replayable }

// Hold gives the response of a hedged call its attempt's context, to be
// cancelled when the caller closes the body.
func (r *request) Hold(resp *http.Response, release context.CancelFunc) {
	if resp == nil || resp.Body == nil {
		release()
		return
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: release}
}

// AttemptTo sends attempt n to t, for recoil.Drive under a policy with a
// Fallback: to its *Endpoint, or as the caller made the request when it
// has none.
func (r *request) AttemptTo(ctx context.Context, n int, t *recoil.Target, deadline time.Time) (*http.Response, error) {
	var ep *Endpoint
	if t != nil {
		ep, _ = t.Value.(*Endpoint)
	}
	var tb recoil.Breaker
	if t != nil {
		tb = t.Breaker
	}
	return r.attempt(ctx, n, ep, tb, deadline)
}

// prepareRoutes readies a request for a Fallback's targets: it finds the
// first target's endpoint, and reads a body that cannot otherwise be sent
// twice (no GetBody) into memory, up to 32 MiB, so the call can move to
// another target. A larger one is sent as it is, once.
func (r *request) prepareRoutes(f *recoil.Fallback) error {
	if len(f.Targets) > 0 {
		r.first, _ = f.Targets[0].Value.(*Endpoint)
	}
	req := r.orig
	if r.replayable || req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, maxRewriteBody+1))
	if err != nil {
		return err
	}
	if len(b) > maxRewriteBody {
		req.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}
		return nil
	}
	_ = req.Body.Close()
	r.body, r.buffered, r.replayable = b, true, true
	return nil
}

// route points the attempt out at the endpoint the call chose. When the
// endpoint names a model, the body is read once (through GetBody, or
// already buffered) and rewritten; the body out carried is then not
// sent: a copy is closed here, and the caller's own (own) is left for
// RoundTrip to close.
func (r *request) route(out *http.Request, ep *Endpoint, own bool) (rewritten bool, err error) {
	if ep.model == "" || out.Body == nil || out.Body == http.NoBody {
		ep.route(out, r.orig, r.first, nil)
		return false, nil
	}
	r.bodyMu.Lock()
	if r.body == nil {
		if r.orig.GetBody == nil { // a body over 32 MiB that could not be buffered
			err = errRewriteBody
		} else {
			r.body, err = readBody(r.orig)
		}
	}
	body := r.body
	r.bodyMu.Unlock()
	if err != nil {
		return false, err
	}
	if !own {
		_ = out.Body.Close()
	}
	ep.route(out, r.orig, r.first, body)
	return true, nil
}

// Verdict classifies an attempt once, for recoil.Drive: the policy's
// Classify first, then the HTTP rules (the Transport's Classify, then the
// package's: see Classify), then the built-in ones (Policy.Verdict), and
// last the guard of a request that may not be sent again. It returns the
// error to record a failure with, nil for a success.
func (r *request) Verdict(p *recoil.Policy, resp *http.Response, err error) (recoil.Verdict, error) {
	var (
		reads *time.Timer // the attempt's cut-off, armed for the Transport's own reads
		pk    *peeked     // a hedged stream's first event, read by the attempt
	)
	if resp != nil {
		if pk, _ = resp.Body.(*peeked); pk != nil {
			resp.Body = pk.ReadCloser
		}
		if cb, ok := resp.Body.(*cancelBody); ok {
			reads = cb.reads
		}
	}
	v, failure := r.own(resp, err, pk)
	if reads != nil { // the Transport's reads are done: the body is the caller's
		reads.Stop()
	}
	if failure == nil {
		return recoil.Verdict{}, nil
	}
	return r.guard(p.Verdict(failure, v)), failure
}

// own is the HTTP rules' verdict on an attempt: the Transport's Classify
// first, then the package's. It returns the error to record a failure
// with, nil for a success. pk, if not nil, is what the attempt already
// made of a hedged stream's first event.
func (r *request) own(resp *http.Response, err error, pk *peeked) (recoil.Verdict, error) {
	t := r.t
	r.answered = resp != nil
	if resp != nil {
		r.status, r.provider = resp.StatusCode, ""
		if r.acct != nil {
			if h, perr := hop.ParseResponse(resp.Header); perr == nil && h.Spent > 0 {
				r.acct.Below(h.Spent)
			}
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
		if failure == nil { // a verdict on nothing: a failure without words
			failure = errors.New("recoilhttp: classified as " + v.Class.String())
		}
	case resp == nil:
		v, failure = classifyError(r.orig, err), err
	case resp.StatusCode >= 400:
		var se *StatusError
		v, se = classifyStatus(r.orig, resp, r.keyed, time.Now())
		failure = se
	case pk != nil:
		v, failure = pk.v, pk.failure
	case !t.NoStreamCheck && isEventStream(resp):
		v, failure = t.streamStart(resp)
	default:
		return recoil.Verdict{}, nil
	}
	if failure == nil {
		return recoil.Verdict{}, nil
	}
	if se, ok := failure.(*StatusError); ok {
		r.provider = se.Provider.Message
	}
	if resp != nil {
		hold(resp)
	}
	return v, failure
}

// guard keeps a retryable verdict only for a request that may be sent
// again: its body can be replayed, and running it twice is harmless or it
// was not sent.
func (r *request) guard(v recoil.Verdict) recoil.Verdict {
	if !v.Class.Retryable() {
		return v
	}
	switch {
	case !r.replayable:
		v.Class, v.Code = recoil.ClassPermanent, CodeNotReplayable
		v.Reason += "; not retried: the request body cannot be replayed (no GetBody)"
	case !r.mayRepeat && (r.answered || v.MayHaveExecuted):
		v.Class, v.Code = recoil.ClassPermanent, CodeNotIdempotent
		v.Reason += "; not retried: " + r.orig.Method + " may have run and has no idempotency key (opt in with AllowRetry or RetryNonIdempotent)"
	}
	return v
}

// Discard drains and closes a response the loop retried.
func (r *request) Discard(resp *http.Response) { discard(resp) }

// Report sends the request's summary to the Transport's Observe.
func (r *request) Report(ctx context.Context, s recoil.Summary) {
	if r.t.Observe == nil {
		return
	}
	r.t.Observe(ctx, Summary{Summary: s, Method: r.orig.Method, Host: r.orig.URL.Host, Status: r.status, Provider: r.provider, Note: r.note})
}

// hold reads a failed response's body into memory (at most MaxDrain) and
// closes it, so the connection goes back to the pool while the loop waits;
// the response may still be the one the caller gets, with its whole body.
// A longer body keeps the rest unread behind what was read.
func hold(resp *http.Response) {
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	buf, err := io.ReadAll(io.LimitReader(resp.Body, MaxDrain+1))
	if err == nil && len(buf) <= MaxDrain {
		_ = resp.Body.Close()
		resp.Body = &heldBody{Reader: bytes.NewReader(buf)}
		return
	}
	resp.Body = &heldBody{Reader: io.MultiReader(bytes.NewReader(buf), errReader{err, resp.Body}), closer: resp.Body}
}

// heldBody is a response body read ahead by hold.
type heldBody struct {
	io.Reader
	closer io.Closer // the rest, when there is a rest
}

func (b *heldBody) Close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// errReader reads r, or returns err if reading ahead already failed.
type errReader struct {
	err error
	r   io.Reader
}

func (e errReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return e.r.Read(p)
}

// streamStart reads a text/event-stream response up to its first event
// (under the idle limit, which it applies to the body from here on). An
// "event: error", or a stream that fails or ends before any event, is a
// failed attempt that may be retried; after content has been delivered to
// the caller, no retry is possible and failures reach the reader as
// *StreamError.
func (t *Transport) streamStart(resp *http.Response) (recoil.Verdict, error) {
	if idle := t.idleTimeout(); idle > 0 {
		resp.Body = SSEIdleBody(resp.Body, idle)
	}
	ev, body, err := FirstEvent(resp.Body, MaxErrorBody)
	resp.Body = &wrapped{body}
	switch {
	case err == nil && (ev.Name == "error" || ev.Name == "" && errorData(ev.Data)):
		pe, _, _ := ParseErrorBody([]byte(ev.Data))
		what := "event: error"
		if ev.Name == "" {
			what = `data: {"error": …}`
		}
		v := recoil.Verdict{Class: recoil.ClassTransient, MayHaveExecuted: true, Code: CodeStreamError, Reason: "stream error before any content: " + describe(pe, what)}
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

// errorData reports an unnamed event whose data is a JSON object with an
// "error" member that is not null: how Chat Completions streams report an
// error (the other dialect names the event "error").
func errorData(data string) bool {
	if !strings.HasPrefix(strings.TrimSpace(data), "{") {
		return false
	}
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(data), &probe) != nil {
		return false
	}
	e := bytes.TrimSpace(probe.Error)
	return len(e) > 0 && !bytes.Equal(e, []byte("null"))
}

// wrapped marks a body the Transport has already wrapped.
type wrapped struct{ io.ReadCloser }

// wrapBody applies the idle limit to a body handed to the caller.
func (t *Transport) wrapBody(resp *http.Response) *http.Response {
	idle := t.idleTimeout()
	if idle <= 0 || resp.Body == nil || resp.Body == http.NoBody {
		return resp
	}
	if _, ok := resp.Body.(*wrapped); ok {
		return resp
	}
	if isEventStream(resp) {
		resp.Body = SSEIdleBody(resp.Body, idle)
	} else {
		resp.Body = IdleBody(resp.Body, idle)
	}
	return resp
}

// Idle limits for Transport.IdleTimeout.
const (
	// DefaultIdleTimeout is the idle limit of a Transport whose IdleTimeout
	// is zero: five minutes without a byte (or, on a text/event-stream,
	// without a content event) is a peer that stopped sending, not a slow
	// one — longer than any model's silence before its first token that
	// providers keep a connection open for, far shorter than for ever.
	DefaultIdleTimeout = 5 * time.Minute
	// NoIdleTimeout, as Transport.IdleTimeout, turns the idle limit off: a
	// read of the body then waits as long as the peer and the request's
	// context let it. Use it only when every read is bounded another way.
	NoIdleTimeout time.Duration = -1
)

// idleTimeout is the idle limit in force: IdleTimeout, its default, or
// none (zero).
func (t *Transport) idleTimeout() time.Duration {
	switch {
	case t.IdleTimeout == 0:
		return DefaultIdleTimeout
	case t.IdleTimeout < 0:
		return 0
	}
	return t.IdleTimeout
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
	reads  *time.Timer // the attempt's cut-off, while the Transport reads the body itself
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// newKey returns a random idempotency key.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "recoil-" + hex.EncodeToString(b[:])
}

// ModelAPI returns a Transport for a model provider's API (base nil means
// http.DefaultTransport), for use under the provider's SDK with its own
// retries off. Generation calls are POSTs and are billed per attempt, so
// the preset retries them only under an Idempotency-Key it
// generates, the same on every attempt of a logical request — providers that
// honour keys run it once — and under its own retry budget, which stops
// retries when failures are sustained. Streams fail after 15 s without a
// content event (an idle-stream timeout); pings do not count.
// Attempts, waits and Retry-After follow the default policy: 3 attempts,
// full jitter, server waits honoured up to 60 s.
func ModelAPI(base http.RoundTripper) *Transport {
	return &Transport{Base: base, IdempotencyKey: true, IdleTimeout: 15 * time.Second}
}

// SlogObserver returns an Observe function that writes each request's
// Summary as one log line to l (nil means nothing is written): the core
// summary's attributes (recoil.Summary.Attrs, refused_wait among them) with
// method, host, status, the provider's message and any note, logged under
// the request's context so a handler that reads trace ids finds them.
func SlogObserver(l *slog.Logger) func(context.Context, Summary) {
	if l == nil {
		return func(context.Context, Summary) {}
	}
	return func(ctx context.Context, s Summary) {
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
