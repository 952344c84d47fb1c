package recoilhttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strconv"
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
// Under a policy with a Hedge, a request that may be repeated so and whose
// body can be sent again is hedged: its first attempt runs on the caller's
// goroutine, each hedge in a goroutine of its own, every attempt under a
// context of its own, and a text/event-stream is decided on its first
// content event, read in the attempt, so that a stream slow to start is
// raced. The response returned keeps its attempt's context until its body
// is closed. Other requests run one attempt at a time. Under a Fallback,
// each attempt goes to its target's Endpoint.
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
	// the limit off, for a caller that bounds every read itself. One timer
	// of the Transport's watches every body it returned that is still
	// open: a body costs no timer and no goroutine of its own, and while
	// none is open no goroutine runs (the timer fires once more, finds
	// none and stops).
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
	idle    idleWatch   // the idle limit on the bodies RoundTrip returns
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

// RoundTrip implements http.RoundTripper: it runs the one retry loop
// (recoil.Drive) with the request as its driver.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	p := t.policy()
	r, err := t.prepare(p, req)
	if err != nil {
		return nil, err
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
	resp.Body = t.idle.open(resp.Body, idle, isEventStream(resp))
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
	// The keys are canonical: indexed directly, not canonicalized per call.
	switch sdk := firstValue(req.Header, "X-Stainless-Retry-Count"); {
	case sdk != "" && sdk != "0":
		what = "the SDK above retries too (X-Stainless-Retry-Count " + sdk + ")"
	case firstValue(req.Header, hop.HeaderAttempt) != "":
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

// firstValue is h.Get(key) for a key already in canonical form.
func firstValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
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
