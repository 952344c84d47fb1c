package recoilhttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// request is one logical request: the driver of its attempts for
// recoil.Drive, and what classifying them needs to know of it. It is
// pooled (requests). Each attempt's own state is a value of its own
// (sending, attempt.go); the request holds what the call's attempts
// share, in three groups by who writes them.
type request struct {
	// The call's: set by RoundTrip before the loop starts, and only read
	// while attempts run.
	t          *Transport
	orig       *http.Request
	replayable bool
	mayRepeat  bool   // may run twice: idempotent, keyed, or opted in
	keyed      bool   // carries an idempotency key, the caller's or generated
	key        string // generated idempotency key, if any
	acct       *hop.Account
	hedged     bool      // attempts may run at once (a Hedge on a request that may repeat)
	note       string    // a stacked retry layer, reported once per Transport
	first      *Endpoint // under a Fallback, the first target's endpoint
	buffered   bool      // the body was read before the loop: every attempt sends a copy

	// Written by the attempts: the body, when the Transport read it (to
	// replay or rewrite it), under bodyMu, as hedges to one target may
	// race to read it; origSent by attempt 1 alone, the one attempt that
	// may hand Base the caller's own body, and read once the loop is over.
	bodyMu   sync.Mutex
	body     []byte
	origSent bool

	// The last outcome's: written by Verdict, which the loop calls for
	// one outcome at a time.
	answered bool // the last attempt produced a response
	status   int  // the last response's status
	provider string
}

// prepare makes the driver of req's attempts under p, from the pool:
// whether req may be repeated and hedged, its idempotency key, its hop
// account and, under a Fallback, its body read into memory when it
// cannot otherwise be sent twice.
func (t *Transport) prepare(p *recoil.Policy, req *http.Request) (*request, error) {
	ctx := req.Context()
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
	return r, nil
}

// requests recycles the drivers of logical requests, which escape to the
// heap through recoil.Drive: the healthy path then allocates nothing of
// the Transport's own.
var requests = sync.Pool{New: func() any { return new(request) }}

// RequestBudget returns the hop account the request's retries are spent
// from, if any: the one its context carries, or at an edge with Hop set
// one of its own.
func (r *request) RequestBudget() recoil.Budget {
	if r.acct == nil {
		return nil
	}
	return r.acct
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
