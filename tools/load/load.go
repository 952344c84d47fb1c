package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/internal/hist"
	"github.com/recoil-go/recoil/tools/tally"
)

// Defaults for a Config's zero fields.
const (
	// DefaultPause is how long a caller waits before it starts a new
	// logical request after one that was not accepted.
	DefaultPause = 100 * time.Millisecond
	// DefaultMaxRequests bounds the logical requests of a run.
	DefaultMaxRequests = 10_000
	// DefaultDuration bounds a run's time.
	DefaultDuration = time.Minute
	// DefaultTimeout bounds each logical request, waits included.
	DefaultTimeout = 30 * time.Second
	// DefaultProgressEvery is how often Progress is called.
	DefaultProgressEvery = 250 * time.Millisecond
)

// Limits of a Config, which Validate enforces: a run within them holds a
// bounded number of goroutines and connections (its latencies are kept in
// fixed memory whatever their number).
const (
	// MaxCallers is the most closed-loop callers a run may have.
	MaxCallers = 10_000
	// MaxRate is the highest open-loop arrival rate, calls per second.
	MaxRate = 10_000
	// MaxLogicalRequests is the highest MaxRequests.
	MaxLogicalRequests = 10_000_000
	// MaxDuration is the longest Duration, Timeout or Pause.
	MaxDuration = 24 * time.Hour
	// MaxBody is the largest request Body, in bytes.
	MaxBody = 32 << 20
)

// Config describes a run: who calls, how often, through what policy, and
// the bounds. Every zero field means its documented default; URL is
// required.
//
// A run makes calls. In a closed loop (Rate zero) Callers callers each
// make calls one after another; in an open loop calls arrive at Rate per
// second (exponential gaps drawn from Seed). A call is one logical request
// — one RoundTrip through a recoilhttp.Transport under Policy, which makes
// the attempts — or, with UntilAccepted, as many logical requests as it
// takes to have one accepted, each begun after a pause when the one before
// was not: callers that each need one payment through, and try again when
// the retry loop gives up. An until-accepted caller makes one
// call and is done; so is each open-loop arrival; a closed-loop caller
// without UntilAccepted goes on until the bounds.
//
// The bounds: at most MaxRequests logical requests in all, the run's
// Duration, each logical request's Timeout.
//
// A Config is a plain value; Run does not keep it.
type Config struct {
	// URL is where the requests go.
	URL string
	// Method is the requests' method; empty means GET, or POST when Body
	// is set. A request whose method is not idempotent is sent with an
	// Idempotency-Key (the request id), so the Transport may retry it,
	// unless NoIdempotencyKey is set.
	Method string
	// NoIdempotencyKey sends requests whose method is not idempotent
	// without an Idempotency-Key and lets the Transport retry them anyway
	// (recoilhttp.Transport.RetryNonIdempotent), as a retry loop that does
	// not know about keys does: against a server that performs a side
	// effect, a retry after a lost answer does it twice.
	NoIdempotencyKey bool
	// Body is each request's body.
	Body []byte
	// Header is added to each request.
	Header http.Header

	// Callers is the number of closed-loop callers; zero means 1 when Rate
	// is zero. Set Callers or Rate, not both.
	Callers int
	// Rate is the open-loop arrival rate, calls per second.
	Rate float64
	// UntilAccepted makes each job repeat logical requests until one is
	// accepted.
	UntilAccepted bool
	// Pause is the wait before a caller's next logical request after one
	// that was not accepted; zero means DefaultPause, negative means none.
	// It is the same every time: a caller's own loop, written plainly.
	Pause time.Duration

	// MaxRequests bounds the logical requests; zero means
	// DefaultMaxRequests.
	MaxRequests int
	// Duration bounds the run; zero means DefaultDuration. Requests in
	// progress when it ends are cancelled.
	Duration time.Duration
	// Timeout bounds each logical request; zero means DefaultTimeout.
	Timeout time.Duration

	// Policy is the retry policy; a zero Policy means Preset("default").
	Policy Policy
	// Window is the span the peak is counted over; zero means
	// tally.DefaultWindow (200 ms).
	Window time.Duration
	// Seed seeds the jitter and the open-loop arrivals.
	Seed uint64

	// Base sends each attempt; nil means an http.Transport of the run's
	// own, sized for its callers, closed when the run ends.
	Base http.RoundTripper
	// ClientHeader and RequestHeader name the headers that carry the
	// caller's id ("caller-3", "arrival-17") and the logical request's id;
	// empty means tally.DefaultClientHeader and
	// tally.DefaultRequestHeader.
	ClientHeader, RequestHeader string

	// Progress, if set, is called every ProgressEvery while the run lasts,
	// from a goroutine of its own.
	Progress func(Progress)
	// ProgressEvery is how often Progress is called; zero means
	// DefaultProgressEvery.
	ProgressEvery time.Duration
}

// Progress is a run's state while it runs: a plain value.
type Progress struct {
	Elapsed  time.Duration // since the run began
	Calls    int64         // calls begun
	OK       int64         // calls that succeeded
	Failed   int64         // calls that ended without success
	Requests int64         // logical requests started
	Attempts int64         // attempts sent
	// TransportErrors counts the attempts that got no response (see
	// Result.TransportErrors).
	TransportErrors int64
}

// ErrConfig is matched by the errors Validate and Run return for a Config
// that is not valid.
var ErrConfig = errors.New("load: invalid config")

// ConfigError reports a Config field that is not valid. It matches
// ErrConfig with errors.Is. It is a plain value.
type ConfigError struct {
	Field  string // the Config field, e.g. "Callers"
	Value  any    // the value it held
	Reason string // what it must be, e.g. "must be at most 10000"
}

// Error names the field, its value and what it must be.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("load: Config.%s %v: %s", e.Field, e.Value, e.Reason)
}

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func configErr(field string, v any, format string, args ...any) error {
	return &ConfigError{Field: field, Value: v, Reason: fmt.Sprintf(format, args...)}
}

// Stop reasons in Result.Stopped.
const (
	StoppedMaxRequests = "max requests"
	StoppedDuration    = "duration"
	StoppedCanceled    = "canceled"
)

// run is one run's shared state.
type run struct {
	cfg      Config
	tr       *recoilhttp.Transport
	method   string
	start    time.Time
	idPrefix string

	started  atomic.Int64 // logical requests started
	accepted atomic.Int64 // logical requests accepted
	attempts atomic.Int64
	capped   atomic.Bool
	window   *tally.Window

	mu        sync.Mutex
	calls     int64 // calls begun
	ok        int64 // calls that succeeded
	failed    int64 // calls that ended without success
	latencies hist.Hist
	stops     map[string]int
	statuses  map[int]int64
	transport map[string]int64 // attempts without a response, by TransportErrorKind
	firstErr  string           // the first of them
	lastOK    time.Duration    // when the last call succeeded
}

// outcome is how a logical request ended.
type outcome uint8

const (
	accepted outcome = iota // a 2xx, its body read to the end
	failed                  // anything else, the reason counted
	cut                     // the run's end (its duration, or its context) cut it off
)

// Run drives cfg.URL as cfg says and returns what the callers counted.
// The error is nil unless cfg is not valid (a *ConfigError, before any
// request is sent) or ctx ended the run early: then it is
// context.Cause(ctx), and the Result holds what was counted until then.
// A run stops within moments of its Duration's end or ctx's cancellation,
// even while it is still starting its callers.
//
// A run whose requests all failed is not an error: the Result says why
// they failed (Result.TransportErrors, Result.Statuses, Result.Stops;
// Result.Diagnosis puts it in words).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// The callers draw from streams of their own unless the policy brings a
	// Rand (one a previous run set, a lockedRand, is the run's own).
	var own backoff.Source
	if cfg.Policy.Policy != nil {
		own = cfg.Policy.Policy.Rand
	}
	_, ours := own.(*lockedRand)
	perCaller := own == nil || ours
	normalize(&cfg)
	r := &run{
		cfg:       cfg,
		method:    cfg.Method,
		window:    tally.NewWindow(cfg.Window),
		stops:     map[string]int{},
		statuses:  map[int]int64{},
		transport: map[string]int64{},
	}
	base := cfg.Base
	if base == nil {
		conns := max(cfg.Callers, 64)
		if cfg.Rate > 0 {
			conns = 256
		}
		t := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 30 * time.Second}
		defer t.CloseIdleConnections()
		base = t
	}
	r.tr = cfg.Policy.Transport(counting{base: base, r: r})
	r.tr.Observe = r.observe
	if cfg.NoIdempotencyKey {
		r.tr.RetryNonIdempotent = func(*http.Request) bool { return true }
	}

	runCtx, cancel := context.WithTimeoutCause(ctx, cfg.Duration, errDuration)
	defer cancel()
	r.start = time.Now()
	r.idPrefix = strconv.FormatInt(r.start.UnixNano(), 36) + "-"

	var progress sync.WaitGroup
	stopProgress := make(chan struct{})
	if cfg.Progress != nil {
		progress.Go(func() { r.report(stopProgress) })
	}
	var jobs sync.WaitGroup
	if cfg.Rate > 0 {
		r.arrivals(runCtx, &jobs)
	} else {
		for i := range cfg.Callers {
			if runCtx.Err() != nil {
				break // the run is over before all its callers started
			}
			ctx := runCtx
			if perCaller {
				ctx = recoil.WithJitter(runCtx, rand.New(JitterSource(cfg.Seed, i)))
			}
			jobs.Go(func() { r.job(ctx, "caller-"+strconv.Itoa(i+1), 0) })
		}
	}
	jobs.Wait()
	close(stopProgress)
	progress.Wait()

	res := r.result(time.Since(r.start))
	switch {
	case ctx.Err() != nil:
		res.Stopped = StoppedCanceled
		return res, context.Cause(ctx)
	case errors.Is(context.Cause(runCtx), errDuration):
		res.Stopped = StoppedDuration
	case r.capped.Load():
		res.Stopped = StoppedMaxRequests
	}
	return res, nil
}

var errDuration = errors.New("load: the run's duration is over")

// Validate reports the first field of c that is not valid, in a
// *ConfigError that names it. Zero fields are valid: they mean their
// defaults. Validate does not modify c.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return configErr("URL", strconv.Quote(c.URL), "want an http or https URL with a host")
	}
	if c.Method != "" {
		if _, err := http.NewRequest(c.Method, c.URL, nil); err != nil {
			return configErr("Method", strconv.Quote(c.Method), "not a valid HTTP method")
		}
	}
	switch {
	case c.Callers < 0:
		return configErr("Callers", c.Callers, "must not be negative")
	case c.Callers > MaxCallers:
		return configErr("Callers", c.Callers, "must be at most %d", MaxCallers)
	case !(c.Rate >= 0): // also rejects NaN
		return configErr("Rate", c.Rate, "must not be negative")
	case c.Rate > MaxRate:
		return configErr("Rate", c.Rate, "must be at most %d per second", MaxRate)
	case c.Callers > 0 && c.Rate > 0:
		return configErr("Rate", c.Rate, "set Callers (closed loop) or Rate (open loop), not both")
	case c.MaxRequests < 0:
		return configErr("MaxRequests", c.MaxRequests, "must not be negative")
	case c.MaxRequests > MaxLogicalRequests:
		return configErr("MaxRequests", c.MaxRequests, "must be at most %d", MaxLogicalRequests)
	case c.Duration < 0:
		return configErr("Duration", c.Duration, "must not be negative")
	case c.Timeout < 0:
		return configErr("Timeout", c.Timeout, "must not be negative")
	case c.Duration > MaxDuration:
		return configErr("Duration", c.Duration, "must be at most %v", MaxDuration)
	case c.Timeout > MaxDuration:
		return configErr("Timeout", c.Timeout, "must be at most %v", MaxDuration)
	case c.Pause > MaxDuration:
		return configErr("Pause", c.Pause, "must be at most %v", MaxDuration)
	case c.Window != 0 && (c.Window < tally.MinWindow || c.Window > tally.MaxWindow):
		return configErr("Window", c.Window, "must be between %v and %v", tally.MinWindow, tally.MaxWindow)
	case len(c.Body) > MaxBody:
		return configErr("Body", fmt.Sprintf("of %d bytes", len(c.Body)), "must be at most %d bytes", MaxBody)
	case c.ProgressEvery < 0:
		return configErr("ProgressEvery", c.ProgressEvery, "must not be negative")
	}
	for name, vs := range c.Header {
		if !validHeaderName(name) {
			return configErr("Header", strconv.Quote(name), "not a valid header name")
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return configErr("Header", strconv.Quote(name+": "+v), "a header value may not hold control characters")
			}
		}
	}
	for _, h := range []struct{ field, name string }{{"ClientHeader", c.ClientHeader}, {"RequestHeader", c.RequestHeader}} {
		if h.name != "" && !validHeaderName(h.name) {
			return configErr(h.field, strconv.Quote(h.name), "not a valid header name")
		}
	}
	return nil
}

// validHeaderName reports whether s is an HTTP field name: a token
// (RFC 9110, section 5.1).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s may be sent as a field value: no
// control characters but tab (RFC 9110, section 5.5).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// normalize fills in the defaults of a valid Config's zero fields.
func normalize(c *Config) {
	if c.Callers == 0 && c.Rate == 0 {
		c.Callers = 1
	}
	if c.Method == "" {
		c.Method = http.MethodGet
		if len(c.Body) > 0 {
			c.Method = http.MethodPost
		}
	}
	if c.Pause == 0 {
		c.Pause = DefaultPause
	}
	if c.MaxRequests == 0 {
		c.MaxRequests = DefaultMaxRequests
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Policy.Policy == nil && c.Policy.Name == "" {
		c.Policy, _ = Preset(PresetDefault)
	}
	if c.Policy.Policy == nil {
		c.Policy.Policy = &recoil.Policy{}
	}
	if c.Policy.Policy.Rand == nil {
		c.Policy.Policy.Rand = &lockedRand{r: rand.New(JitterSource(c.Seed, -1))}
	}
	if c.ClientHeader == "" {
		c.ClientHeader = tally.DefaultClientHeader
	}
	if c.RequestHeader == "" {
		c.RequestHeader = tally.DefaultRequestHeader
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
}

// JitterSource returns the random source a run of the given seed draws
// jitter from when the policy brings no Rand of its own: caller k (from 0)
// of a closed-loop run draws from JitterSource(seed, k), a stream of its
// own (recoil.WithJitter), so it waits the same waits whatever order the
// callers' attempts fail in; an open-loop run's calls share
// JitterSource(seed, -1). A simulation given the same sources
// (sim.Scenario.JitterSource) draws the same waits as the run.
func JitterSource(seed uint64, caller int) rand.Source {
	return rand.NewPCG(seed, 0x5eed+uint64(caller+1)<<32)
}

// lockedRand makes a PCG safe for the callers to share.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Int64N(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Int64N(n)
}

// arrivals starts open-loop calls at the configured rate until the run's
// context ends or the logical requests reach their bound.
func (r *run) arrivals(ctx context.Context, jobs *sync.WaitGroup) {
	rnd := rand.New(rand.NewPCG(r.cfg.Seed, 0xa771))
	next := r.start
	t := time.NewTimer(0)
	defer t.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		seq, ok := r.reserve()
		if !ok {
			return
		}
		id := "arrival-" + strconv.Itoa(i)
		jobs.Go(func() { r.job(ctx, id, seq) })
		next = next.Add(time.Duration(rnd.ExpFloat64() / r.cfg.Rate * float64(time.Second)))
		t.Reset(time.Until(next))
	}
}

// reserve takes the number of the next logical request, if the bound
// allows one more.
func (r *run) reserve() (int64, bool) {
	seq := r.started.Add(1)
	if seq > int64(r.cfg.MaxRequests) {
		r.started.Add(-1)
		r.capped.Store(true)
		return 0, false
	}
	return seq, true
}

// job runs one caller's or arrival's calls, the first logical request
// numbered seq if it is not zero (an arrival's, reserved when it arrived).
func (r *run) job(ctx context.Context, client string, seq int64) {
	var pause *time.Timer
	defer func() {
		if pause != nil {
			pause.Stop()
		}
	}()
	for {
		// One call: a logical request, or with UntilAccepted as many as it
		// takes, each after a pause. It begins once its first is reserved.
		if seq == 0 {
			var ok bool
			if seq, ok = r.reserve(); !ok {
				return
			}
		}
		r.mu.Lock()
		r.calls++
		r.mu.Unlock()
		begin := time.Now()
		out := cut
		for {
			if seq == 0 {
				var ok bool
				if seq, ok = r.reserve(); !ok {
					break
				}
			}
			out = r.logical(ctx, client, seq)
			seq = 0
			if out != failed || !r.cfg.UntilAccepted {
				break
			}
			if r.cfg.Pause > 0 {
				if pause == nil {
					pause = time.NewTimer(r.cfg.Pause)
				} else {
					pause.Reset(r.cfg.Pause)
				}
				select {
				case <-ctx.Done():
				case <-pause.C:
				}
			}
			if ctx.Err() != nil {
				out = cut
				break
			}
		}
		r.endCall(out, time.Since(begin))
		if out == cut || r.cfg.UntilAccepted || r.cfg.Rate > 0 {
			return
		}
		if out == failed && r.cfg.Pause > 0 {
			if pause == nil {
				pause = time.NewTimer(r.cfg.Pause)
			} else {
				pause.Reset(r.cfg.Pause)
			}
			select {
			case <-ctx.Done():
				return
			case <-pause.C:
			}
		}
	}
}

// endCall counts a call that ended with out after d.
func (r *run) endCall(out outcome, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch out {
	case accepted:
		r.ok++
		r.lastOK = max(r.lastOK, time.Since(r.start))
		r.latencies.Add(d)
	case failed:
		r.failed++
		r.latencies.Add(d)
	}
}

// logical makes one logical request and says how it ended.
func (r *run) logical(ctx context.Context, client string, seq int64) outcome {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if len(r.cfg.Body) > 0 {
		body = bytes.NewReader(r.cfg.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.cfg.URL, body)
	if err != nil {
		r.stop("request: " + err.Error())
		return failed
	}
	for k, v := range r.cfg.Header {
		req.Header[k] = append([]string(nil), v...)
	}
	id := r.idPrefix + strconv.FormatInt(seq, 10)
	req.Header.Set(r.cfg.ClientHeader, client)
	req.Header.Set(r.cfg.RequestHeader, id)
	if !idempotent(r.method) && !r.cfg.NoIdempotencyKey && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", id)
	}
	resp, err := r.tr.RoundTrip(req)
	out := failed
	switch {
	case err != nil && ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded:
		// The run's end, not the request's own deadline.
		out = cut
	case err != nil:
		// The Transport's summary has counted why.
	default:
		_, rerr := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case rerr != nil && ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded:
			out = cut
		case rerr != nil:
			r.stop("body failed")
		case resp.StatusCode < 200 || resp.StatusCode > 299:
			// Counted by the summary, with the reason the Transport stopped.
		default:
			out = accepted
			r.accepted.Add(1)
		}
	}
	return out
}

func idempotent(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

func (r *run) stop(why string) {
	r.mu.Lock()
	r.stops[why]++
	r.mu.Unlock()
}

// observe receives the Transport's summary of each logical request, and
// counts why the ones that failed stopped.
func (r *run) observe(_ context.Context, s recoilhttp.Summary) {
	switch s.Reason {
	case recoil.ReasonNone:
	case recoil.ReasonCanceled:
		// The logical request's own timeout ran out during an attempt or
		// a wait; the run's end or its caller's cancellation cut it off
		// (a call left unfinished, not a failure).
		if errors.Is(s.Err, context.DeadlineExceeded) {
			r.stop("timeout")
		}
	default:
		r.stop(s.Reason.String())
	}
}

// counting sends each attempt and counts it, on the client side: when it
// left and what came back.
type counting struct {
	base http.RoundTripper
	r    *run
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.r.attempts.Add(1)
	c.r.window.Add()
	resp, err := c.base.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	c.r.mu.Lock()
	c.r.statuses[status]++
	c.r.mu.Unlock()
	if err != nil {
		c.r.transportError(req, err)
	}
	return resp, err
}

// transportError counts an attempt that got err instead of a response,
// unless the run's end cut it off (its context, or its duration).
func (r *run) transportError(req *http.Request, err error) {
	kind := TransportErrorKind(err)
	if kind == TransportCanceled || errors.Is(context.Cause(req.Context()), errDuration) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.transport[kind]++
	if r.firstErr == "" {
		r.firstErr = err.Error()
	}
}

func (r *run) report(stop <-chan struct{}) {
	t := time.NewTicker(r.cfg.ProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			r.mu.Lock()
			p := Progress{Elapsed: time.Since(r.start), Calls: r.calls, OK: r.ok, Failed: r.failed,
				Requests: r.started.Load(), Attempts: r.attempts.Load()}
			for _, n := range r.transport {
				p.TransportErrors += n
			}
			r.mu.Unlock()
			r.cfg.Progress(p)
		}
	}
}

func (r *run) result(elapsed time.Duration) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &Result{
		Policy:              r.cfg.Policy.Name,
		URL:                 r.cfg.URL,
		Callers:             r.cfg.Callers,
		Rate:                r.cfg.Rate,
		UntilAccepted:       r.cfg.UntilAccepted,
		NoIdempotencyKey:    r.cfg.NoIdempotencyKey && !idempotent(r.method),
		Seed:                r.cfg.Seed,
		Calls:               r.calls,
		OK:                  r.ok,
		Failed:              r.failed,
		Unfinished:          r.calls - r.ok - r.failed,
		Requests:            r.started.Load(),
		Accepted:            r.accepted.Load(),
		Attempts:            r.attempts.Load(),
		Stops:               r.stops,
		Statuses:            r.statuses,
		TransportErrors:     r.transport,
		FirstTransportError: r.firstErr,
		Window:              r.window.Span(),
		Elapsed:             elapsed,
	}
	if r.cfg.Rate > 0 {
		res.Callers = 0
	}
	if r.cfg.UntilAccepted {
		res.Resubmitted = res.Requests - (res.Calls - res.Unfinished)
	}
	res.Peak, res.PeakAt = r.window.Peak()
	res.AllOK = res.Calls > 0 && res.OK == res.Calls
	if res.AllOK {
		res.AllOKAt = r.lastOK
	}
	res.Latency = percentiles(&r.latencies)
	return res
}

// percentiles summarises the durations h counted.
func percentiles(h *hist.Hist) Percentiles {
	return Percentiles{Count: int(h.Count()), P50: h.Quantile(0.50), P90: h.Quantile(0.90), P99: h.Quantile(0.99), Max: h.Max()}
}
