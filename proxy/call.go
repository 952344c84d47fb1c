package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
)

// call is one logical call through the proxy: what the access log line and
// the answer's headers need to know of it, and the parts of the request it
// sends on that would otherwise each be an allocation of their own (its
// URL, its body's reader, the context that carries the call), held in the
// one record.
type call struct {
	p                          *Proxy
	rt                         *route
	cl                         *client
	proto, model, method, path string
	body                       []byte
	idemKey                    string // the client's Idempotency-Key, if any
	start                      time.Time
	sdkRetry                   bool
	acct                       *hop.Account
	sum                        recoilhttp.Summary
	observed                   bool
	status                     int
	streamed                   int64
	streamErr                  error
	refused                    string // why the proxy answered without a provider's answer

	url    url.URL      // the request out's URL
	reader bytes.Reader // the request out's body for its first attempt: a reader of body
	ctx    callContext  // the request out's context: the call's, carrying the call
}

// getBody returns a new reader of the call's body, for an attempt after
// the first.
func (c *call) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(c.body)), nil
}

// callContext is the context the request out carries: its parent's, which
// also answers callKey with the call, for the Transport's Observe to fill.
type callContext struct {
	context.Context
	c *call
}

// Value implements context.Context.
func (x *callContext) Value(key any) any {
	if key == (callKey{}) {
		return x.c
	}
	return x.Context.Value(key)
}

// Headers the proxy's answers carry.
const (
	// HeaderShouldRetry is the header the official SDKs obey: "false" on a
	// failure answer tells them not to retry it, since the proxy already
	// has (or refused to) under the route's policy.
	HeaderShouldRetry = "X-Should-Retry"
	// HeaderRefused says why the proxy answered a call itself, without
	// sending it to a provider: "sdk-retry" (an SDK's retry of a request
	// whose budget is spent), "client-allowance", "auth", "body".
	HeaderRefused = "Recoil-Refused"
)

// refuse answers the call itself, in its protocol's error shape, telling
// the SDK not to retry.
func (c *call) refuse(w http.ResponseWriter, proto string, status int, code, msg string) {
	c.status = status
	c.refused = code
	h := w.Header()
	h.Set(HeaderShouldRetry, "false")
	h.Set(HeaderRefused, code)
	writeError(w, proto, status, code, msg)
	c.finish(w)
}

// writeError writes an error body as the protocol's SDKs parse one.
func writeError(w http.ResponseWriter, proto string, status int, code, msg string) {
	var b []byte
	if proto == Anthropic {
		b, _ = json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": code, "message": "recoil proxy: " + msg}})
	} else {
		b, _ = json.Marshal(map[string]any{"error": map[string]any{"message": "recoil proxy: " + msg, "type": code, "code": code}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// failed answers a call the Transport ended with no response: refused
// before any attempt (budget, breaker, limiter, allowance), out of time,
// or every attempt lost its connection.
func (c *call) failed(w http.ResponseWriter, err error) {
	if errors.Is(err, context.Canceled) {
		// The client went away: nobody to answer.
		c.status = 499
		c.finish(nil)
		return
	}
	status, code, msg := http.StatusBadGateway, "api_error", "no provider answered: "+err.Error()
	var re *recoil.Error
	switch {
	case errors.Is(err, recoil.ErrBudget), errors.Is(err, recoil.ErrCircuitOpen),
		errors.Is(err, recoil.ErrLimit), errors.Is(err, recoil.ErrNoTarget):
		status, code, msg = http.StatusServiceUnavailable, "overloaded_error", "the route's allowance, retry budget, breaker or limiter refused the call: "+err.Error()
	case errors.Is(err, recoil.ErrDeadline), errors.Is(err, context.DeadlineExceeded):
		status, code, msg = http.StatusGatewayTimeout, "timeout_error", "out of time: "+err.Error()
	}
	if errors.As(err, &re) && re.RefusedWait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((re.RefusedWait+time.Second-1)/time.Second)))
	}
	c.status = status
	h := w.Header()
	h.Set(HeaderShouldRetry, "false")
	if s := c.spent(); s > 0 {
		h.Set(hop.HeaderSpent, strconv.Itoa(s))
	}
	writeError(w, c.proto, status, code, msg)
	c.p.ledger.remember(c, status, nil)
	c.finish(w)
}

func (c *call) spent() int {
	if c.acct == nil {
		return 0
	}
	return c.acct.Spent()
}

// bufs holds the buffers bodies are copied through.
var bufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// answer passes the provider's response to the client: the status, the
// headers but the connection's and the cookies, and the body — a stream
// flushed as each read returns, so every event reaches the client as it
// arrives. A failure answer tells the SDK not to retry it.
func (c *call) answer(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	h := w.Header()
	for k, v := range resp.Header {
		if !respSkip[k] {
			h[k] = v
		}
	}
	c.status = resp.StatusCode
	hop.Response{Spent: c.spent()}.Write(h) // the retries spent at and below the proxy, if any
	if resp.StatusCode >= 400 {
		// The proxy is the chain's one retry layer: what it answers with
		// has been retried, moved or refused already.
		h.Set(HeaderShouldRetry, "false")
		b, _ := io.ReadAll(io.LimitReader(resp.Body, recoilhttp.MaxErrorBody))
		h.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(b)
		c.p.ledger.remember(c, resp.StatusCode, b)
		c.finish(w)
		return
	}
	if v := resp.Header["Content-Length"]; len(v) == 1 && resp.ContentLength >= 0 && !resp.Uncompressed {
		h["Content-Length"] = v // the provider's own, when the body is passed as it came
	}
	ct := resp.Header["Content-Type"] // canonical: no canonicalizing per call
	stream := len(ct) > 0 && strings.HasPrefix(ct[0], "text/event-stream")
	w.WriteHeader(resp.StatusCode)
	bp := bufs.Get().(*[]byte)
	buf := *bp
	fl, _ := w.(http.Flusher)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				c.streamErr = werr // the client went away: closing the body cancels the provider's
				break
			}
			c.streamed += int64(n)
			if stream && fl != nil {
				fl.Flush()
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			c.streamErr = err
			break
		}
	}
	bufs.Put(bp)
	c.finish(w)
	if c.streamErr != nil && c.streamed > 0 && !errors.Is(c.streamErr, context.Canceled) {
		// Content reached the client: no retry, no fallback. The client
		// must see a broken answer, not a complete one: abort the
		// response so its connection ends without the last chunk.
		panic(http.ErrAbortHandler)
	}
}

// finish records the call: the access log line, the page's and metrics'
// counters. w is the answer, nil when there is none: an answer of known
// length, complete, is flushed to the client after the counters and
// before the log line, so that the line is not on its path (net/http would flush it only when
// the handler returns); the flush net/http makes then finds nothing to
// send.
func (c *call) finish(w http.ResponseWriter) {
	p := c.p
	// The counters first: whoever has the answer finds it counted on the
	// page and in /metrics.
	if c.rt != nil && c.status >= 400 {
		c.rt.failed.Add(1)
	}
	if p.metrics != nil {
		p.metrics.call(c)
	}
	if p.log == nil {
		return
	}
	if w != nil && c.streamErr == nil && w.Header().Get("Content-Length") != "" {
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	ctx := context.Background()
	lvl := slog.LevelInfo
	if c.status >= 500 || c.streamErr != nil {
		lvl = slog.LevelWarn
	}
	if !p.log.Enabled(ctx, lvl) {
		return
	}
	attrs := make([]slog.Attr, 0, 24)
	attrs = append(attrs, slog.String("method", c.method), slog.String("path", c.path), slog.Int("status", c.status),
		slog.Duration("elapsed", time.Since(c.start)))
	if c.rt != nil {
		attrs = append(attrs, slog.String("route", c.rt.name))
	}
	if c.model != "" {
		attrs = append(attrs, slog.String("model", c.model))
	}
	if c.cl != nil {
		attrs = append(attrs, slog.String("client", c.cl.name))
	}
	if c.sdkRetry {
		attrs = append(attrs, slog.Bool("sdk_retry", true))
	}
	if c.refused != "" {
		attrs = append(attrs, slog.String("refused", c.refused))
	}
	if c.streamed > 0 {
		attrs = append(attrs, slog.Int64("bytes", c.streamed))
	}
	if c.streamErr != nil {
		attrs = append(attrs, slog.String("stream_error", c.streamErr.Error()))
	}
	if c.observed {
		attrs = append(attrs, c.sum.Attrs()...)
		if c.sum.Provider != "" {
			attrs = append(attrs, slog.String("provider", c.sum.Provider))
		}
	}
	p.log.LogAttrs(ctx, lvl, "recoil proxy call", attrs...)
}

// chargeRetry charges a request that an SDK retries, or that repeats an
// idempotency key already seen, to the budget of the request it repeats
// (the call's account becomes that request's), and reports whether it
// answered the call itself: a retry whose request has no retries left is
// refused with that request's last failure, and is never sent. A retry of
// a request the proxy does not remember (from before a restart, or
// already forgotten) goes once, with no retries of the proxy's own.
func (p *Proxy) chargeRetry(w http.ResponseWriter, c *call) bool {
	e := p.ledger.find(c)
	if e == nil {
		if c.sdkRetry {
			c.acct = hop.NewAccount(0)
		}
		return false
	}
	c.sdkRetry = true
	if !e.acct.TrySpend() {
		c.rt.stormRefused.Add(1)
		c.status = e.status
		c.refused = "sdk-retry"
		h := w.Header()
		h.Set(HeaderShouldRetry, "false")
		h.Set(HeaderRefused, "sdk-retry")
		h.Set(hop.HeaderSpent, strconv.Itoa(e.acct.Spent()))
		if len(e.body) > 0 {
			h.Set("Content-Type", "application/json")
			h.Set("Content-Length", strconv.Itoa(len(e.body)))
			w.WriteHeader(e.status)
			_, _ = w.Write(e.body)
		} else {
			writeError(w, c.proto, e.status, "overloaded_error", "this request's retries are spent")
		}
		c.finish(w)
		return true
	}
	c.acct = e.acct
	return false
}
