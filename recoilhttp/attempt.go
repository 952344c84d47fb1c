package recoilhttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// This file is one attempt of a request: what it sends (a copy of the
// caller's request with its own header map and body, pointed at its
// target), its cut-off, and what it reads itself before the loop sees
// its outcome (a hedged stream's first event).

// Attempt sends attempt n under ctx (the request's), cut off at deadline
// (until its response headers arrive, and then until the Transport's own
// reads of the response are done) when that comes before ctx's own
// deadline: the one cut-off, for the policy's AttemptTimeout and Timeout
// alike, since recoil.Drive derives no deadline. Under a Hedge, attempts
// run at once: each keeps its own state, and only attempt 1 sends the
// caller's own body.
func (r *request) Attempt(ctx context.Context, n int, deadline time.Time) (*http.Response, error) {
	return r.attempt(ctx, n, nil, nil, deadline)
}

// AttemptTo sends attempt n to t, for recoil.Drive under a policy with a
// Fallback: to its *Endpoint, or as the caller made the request when it
// has none.
func (r *request) AttemptTo(ctx context.Context, n int, t *recoil.Target, deadline time.Time) (*http.Response, error) {
	var (
		ep *Endpoint
		tb recoil.Breaker
	)
	if t != nil {
		ep, _ = t.Value.(*Endpoint)
		tb = t.Breaker
	}
	return r.attempt(ctx, n, ep, tb, deadline)
}

// sending is one attempt's own state, apart from the request's, which the
// attempts of a hedged call share: a value on the attempt's goroutine.
type sending struct {
	r        *request
	n        int
	ep       *Endpoint      // where it goes; nil: as the caller made the request
	tb       recoil.Breaker // its target's breaker, for slow reports; nil: none
	ctx      context.Context
	deadline time.Time
	cut      bool               // deadline comes before ctx's own
	cancel   context.CancelFunc // ctx's, when the attempt is cut off
	timer    *time.Timer        // the cut-off, armed until the Transport's own reads are done
	sent     time.Time          // when it was sent, if its body is to be metered
}

// attempt is Attempt to the endpoint ep (nil: the request as its caller
// made it), whose target's breaker is tb (nil: none).
func (r *request) attempt(ctx context.Context, n int, ep *Endpoint, tb recoil.Breaker, deadline time.Time) (*http.Response, error) {
	t := r.t
	a := sending{r: r, n: n, ep: ep, tb: tb, ctx: ctx, deadline: deadline, cut: !deadline.IsZero()}
	if dl, ok := ctx.Deadline(); ok && a.cut && !deadline.Before(dl) {
		a.cut = false // the request's own context already ends then
	}
	if t.SlowStream.on() {
		a.sent = time.Now()
	}
	if !(n > 1 || r.key != "" || t.Hop || a.cut || ep != nil || r.buffered || r.hedged) {
		// Nothing to add: the caller's request goes as it is.
		r.origSent = true
		resp, err := t.base().RoundTrip(r.orig)
		return t.meter(resp, err, a.sent, tb), err
	}
	a.arm()
	out, err := a.request()
	if err != nil {
		a.disarm()
		return nil, err
	}
	resp, err := t.base().RoundTrip(out)
	resp = t.meter(resp, err, a.sent, tb)
	resp, err = a.landed(resp, err)
	if err == nil && r.hedged && !t.NoStreamCheck && resp.StatusCode < 400 && isEventStream(resp) {
		a.peek(resp)
	}
	return resp, err
}

// arm gives the attempt a context of its own, cancelled at its deadline
// when that comes first. Not a context deadline: once the headers are in
// and the Transport's own reads are done (Verdict), the body is the
// caller's to read for as long as it takes.
func (a *sending) arm() {
	if a.cut {
		a.ctx, a.cancel = context.WithCancel(a.ctx)
		a.timer = time.AfterFunc(time.Until(a.deadline), a.cancel)
	}
}

// disarm cancels an attempt that was not sent.
func (a *sending) disarm() {
	if a.cancel != nil {
		a.timer.Stop()
		a.cancel()
	}
}

// request returns what the attempt sends: a shallow copy of the caller's
// request with a header map of its own (the caller's request and header
// map stay untouched; values are shared, never written), its body, its
// target, and the headers it adds.
func (a *sending) request() (*http.Request, error) {
	r, req := a.r, a.r.orig
	out := req.WithContext(a.ctx)
	out.Header = make(http.Header, len(req.Header)+4)
	for k, v := range req.Header {
		out.Header[k] = v
	}
	var err error
	own := false // out carries the caller's own body
	switch {
	case r.buffered:
		out.Body = io.NopCloser(bytes.NewReader(r.body))
	case a.n > 1 && req.GetBody != nil:
		out.Body, err = req.GetBody()
	default:
		own = req.Body != nil && req.Body != http.NoBody
	}
	if err == nil && a.ep != nil {
		var rewritten bool
		rewritten, err = r.route(out, a.ep, own)
		own = own && !rewritten
	}
	if own {
		r.origSent = true
	}
	if err != nil {
		return nil, err
	}
	if r.key != "" {
		out.Header["Idempotency-Key"] = []string{r.key}
	}
	if r.t.Hop && r.acct != nil {
		a.hop(out.Header)
	}
	return out, nil
}

// hop writes the hop protocol's headers: the call tree's remaining
// budget, the remaining deadline (the attempt's cut-off's, if sooner) and
// the attempt's number.
func (a *sending) hop(h http.Header) {
	q := hop.Request{Budget: a.r.acct.Remaining(), HasBudget: true, Attempt: a.n}
	if dl, ok := a.ctx.Deadline(); ok {
		q.Deadline, q.HasDeadline = max(time.Until(dl), 0), true
	}
	if a.cut && (!q.HasDeadline || time.Until(a.deadline) < q.Deadline) {
		q.Deadline, q.HasDeadline = max(time.Until(a.deadline), 0), true
	}
	q.WriteHeader(h)
}

// landed settles the attempt's cut-off once Base has answered: a response
// that raced a cut-off that fired is dropped, so the attempt counts as the
// timeout it was; one that arrived in time keeps its context until its
// body is closed, and the cut-off stays armed until Verdict has done the
// Transport's own reads of it (a trickling error body must not hold the
// call past its deadline).
func (a *sending) landed(resp *http.Response, err error) (*http.Response, error) {
	if a.cancel == nil {
		return resp, err
	}
	fired := !a.timer.Stop()
	switch {
	case fired:
		discard(resp)
		a.cancel()
		return nil, context.DeadlineExceeded
	case resp != nil:
		cb := &cancelBody{ReadCloser: resp.Body, cancel: a.cancel}
		resp.Body = cb
		if left := time.Until(a.deadline); left > 0 {
			cb.reads = a.timer
			a.timer.Reset(left)
		} else {
			a.cancel()
			a.timer = nil
		}
	default:
		a.cancel()
		a.timer = nil
	}
	return resp, err
}

// peek reads a hedged stream's first event in the attempt: a hedged
// stream is decided on its first content, so that a stream slow to start
// is raced.
func (a *sending) peek(resp *http.Response) {
	v, failure := a.r.t.streamStart(resp)
	if a.timer != nil { // the Transport's own reads are done
		a.timer.Stop()
	}
	resp.Body = &peeked{ReadCloser: resp.Body, v: v, failure: failure}
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
