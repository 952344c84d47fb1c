package recoilhttp

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// Middleware is the server side of the hop protocol. For every request it
// reads the caller's retry budget, remaining deadline and attempt number
// (package hop) into the request's context — the deadline less Margin, and a
// hop.Account holding the budget — so a Transport used inside the handler
// honours them with no code from the user. It reports the retries spent at
// and below this hop in the response (Recoil-Retries-Spent), counts attempt
// numbers in a histogram, and, while shedding, refuses retries first with an
// explicit do-not-retry answer.
//
// Build one with NewMiddleware; a Middleware is safe for concurrent use.
type Middleware struct {
	next http.Handler
	cfg  MiddlewareConfig
	hist hop.Histogram
	shed atomic.Bool
}

// MiddlewareConfig configures a Middleware. The zero value is usable.
type MiddlewareConfig struct {
	// Margin is taken off the caller's remaining deadline, for the answer's
	// way back; zero means hop.DefaultDeadlineMargin.
	Margin time.Duration
	// Budget is this hop's own retry budget for the requests it serves,
	// used when a request carries none; zero means hop.DefaultHopBudget (2),
	// negative means zero (hop.Request.AccountBudget).
	Budget int
	// TrustIncoming takes a request's budget as it is. When false (the
	// default), an incoming budget can only lower this hop's own Budget,
	// and the protocol's request headers are replaced by this hop's own
	// figures before the handler runs (the budget its account starts at,
	// the deadline less Margin, no attempt number), so a handler that
	// forwards the request (httputil.ReverseProxy) carries nothing the
	// client sent: the headers come from outside.
	TrustIncoming bool
	// Shed, if set, is asked for every retry (attempt number above 1); true
	// refuses it. SetShedding refuses every retry.
	Shed func(*http.Request) bool
	// Limiter, if set, is asked for a slot for every request the checks
	// above let through, without waiting, and the request holds it until
	// the handler returns; a request it has no slot for is refused 503
	// with Retry-After: 1. A retry is ranked as one for a limiter that
	// orders by priority (limit.Adaptive sheds retries first), and a
	// limiter that moves its limit is told each request's time and
	// whether its answer was an overload (429, 503, 504, 529): with
	// limit.NewAdaptive the service finds its own concurrency.
	Limiter recoil.Limiter
}

// NewMiddleware returns a Middleware in front of next.
func NewMiddleware(next http.Handler, cfg MiddlewareConfig) *Middleware {
	return &Middleware{next: next, cfg: cfg}
}

// Histogram returns the counts of attempt numbers the middleware has seen.
func (m *Middleware) Histogram() *hop.Histogram { return &m.hist }

// SetShedding turns shedding of retries on or off: while on, every request
// whose attempt number is above 1 is refused with 503, Recoil-Retry: no and
// x-should-retry: false (which the official Anthropic and OpenAI SDKs honour),
// before the handler runs. First attempts still pass: shed the traffic the
// failure made, not the traffic that was there.
func (m *Middleware) SetShedding(on bool) { m.shed.Store(on) }

// ServeHTTP implements http.Handler.
func (m *Middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	in, _ := hop.ParseRequest(r.Header) // malformed fields read as absent
	attempt := in.Attempt
	if attempt == 0 {
		attempt = 1
	}
	m.hist.Observe(attempt)
	if attempt > 1 && (m.shed.Load() || (m.cfg.Shed != nil && m.cfg.Shed(r))) {
		h := w.Header()
		hop.Response{NoRetry: true}.Write(h)
		h.Set("X-Should-Retry", "false")
		http.Error(w, "retry refused: the server is shedding retries", http.StatusServiceUnavailable)
		return
	}
	left, hasDeadline := in.TimeLeft(m.cfg.Margin)
	if hasDeadline && left <= 0 {
		h := w.Header()
		hop.Response{NoRetry: true}.Write(h)
		h.Set("X-Should-Retry", "false")
		http.Error(w, "no time left: the caller's deadline leaves this hop nothing to serve the request with", http.StatusGatewayTimeout)
		return
	}
	budget := in.AccountBudget(m.cfg.Budget, m.cfg.TrustIncoming)
	if !m.cfg.TrustIncoming {
		// What the client sent stops here: a handler that forwards the
		// request's headers (httputil.ReverseProxy) carries this hop's
		// figures on, never the client's.
		hop.Request{Budget: budget, HasBudget: true, Deadline: left, HasDeadline: hasDeadline}.ReplaceHeader(r.Header)
	}
	if l := m.cfg.Limiter; l != nil {
		if !takeSlot(l, attempt > 1) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "over the concurrency limit", http.StatusServiceUnavailable)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		w = sw
		defer func() { returnSlot(l, start, sw.status) }()
	}
	acct := hop.NewAccount(budget)
	ctx := hop.WithAccount(r.Context(), acct)
	if hasDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, left)
		defer cancel()
	}
	sw := &spentWriter{ResponseWriter: w, acct: acct}
	m.next.ServeHTTP(sw, r.WithContext(ctx))
	sw.writeSpent() // a handler that wrote nothing still reports
}

// takeSlot takes a slot of l for a request, ranked as a retry when it is
// one, for a limiter that orders by priority.
func takeSlot(l recoil.Limiter, retry bool) bool {
	if pl, ok := l.(recoil.PriorityLimiter); ok {
		return pl.TryAcquireAs(recoil.PriorityInteractive, retry)
	}
	return l.TryAcquire()
}

// returnSlot gives a request's slot back, with its time and whether its
// status was an overload, for a limiter that moves its limit by them.
func returnSlot(l recoil.Limiter, start time.Time, status int) {
	ll, ok := l.(recoil.LatencyLimiter)
	if !ok {
		l.Release()
		return
	}
	now := time.Now()
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		ll.ReleaseAt(now, now.Sub(start), true)
	default:
		ll.ReleaseAt(now, now.Sub(start), false)
	}
}

// statusWriter remembers the status a handler answered with (200 if it
// wrote without one).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush lets streaming handlers flush through it.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// spentWriter adds Recoil-Retries-Spent to the response as its header goes out.
type spentWriter struct {
	http.ResponseWriter
	acct  *hop.Account
	wrote bool
}

func (w *spentWriter) writeSpent() {
	if w.wrote {
		return
	}
	w.wrote = true
	if s := w.acct.Spent(); s > 0 {
		w.ResponseWriter.Header().Set(hop.HeaderSpent, strconv.Itoa(min(s, hop.MaxBudget)))
	}
}

func (w *spentWriter) WriteHeader(code int) {
	w.writeSpent()
	w.ResponseWriter.WriteHeader(code)
}

func (w *spentWriter) Write(p []byte) (int, error) {
	w.writeSpent()
	return w.ResponseWriter.Write(p)
}

// Flush lets streaming handlers flush through the middleware.
func (w *spentWriter) Flush() {
	w.writeSpent()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack lets handlers take over the connection through the middleware.
func (w *spentWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *spentWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
