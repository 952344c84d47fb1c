package gateway

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/tools/tally"
)

// fault is what answered an attempt.
type fault uint8

const (
	faultNone      fault = iota // a success
	faultOutage                 // an outage window
	faultAllowance              // the per-key allowance (429)
	faultValidator              // the validator (400)
	faultFailure                // a random failure
	nFaults
)

var faultNames = [nFaults]string{"none", "outage", "allowance", "validator", "failure"}

// Gateway is a fault-injecting HTTP server that plays a dependency and
// counts, from the receiving side, what its callers send it: attempts in
// total, per client and per logical request, by attempt number (the hop
// protocol's Recoil-Attempt), the accepted ones, and the peak number in any
// window (docs/why.md, section 6). It is an http.Handler:
//
//	GET /          a live page of attempts per window (self-contained HTML)
//	GET /stats     what was counted, as JSON (Stats); ?requests=1 adds each
//	               logical request, ?series=N sets how many windows
//	GET /metrics   the same in the Prometheus exposition format
//	anything else  an attempt at the dependency: /v1/messages answers in the
//	               shape of Anthropic's Messages API (streamed when the body
//	               says "stream": true), a path ending in /stream always
//	               streams, the charge route (/v1/charges; Config.Charge)
//	               makes a counted charge, every other path answers the
//	               same JSON
//
// The timeline (outage windows) counts from the first attempt the gateway
// receives, so a gateway started well before its load still shows the
// outage to it.
//
// Make one with New; the zero Gateway is not usable. A Gateway is safe for
// concurrent use. It serves once: when Serve returns, or after Close,
// streams that stall and latencies that wait end at once.
type Gateway struct {
	cfg Config
	k   int64 // the window in buckets

	mu       sync.Mutex
	begun    bool
	epoch    time.Time // the first attempt
	attempts *tally.Buckets
	accepted *tally.Buckets
	outages  []outageState
	rng      *rand.Rand
	allow    map[string]*tokens

	clients  keyed
	requests keyed
	charges  chargeCounts
	numbers  hop.Histogram
	// responses counts attempts by the fault that answered and the status.
	responses [nFaults][600]atomic.Uint64
	stalls    atomic.Uint64
	hopBad    atomic.Uint64
	inFlight  atomic.Int64 // attempts arrived and not yet answered
	peakIn    atomic.Int64 // the most ever in flight

	duration prometheus.Histogram
	metrics  http.Handler

	lane      *lane // Config.Serial's; nil when off
	quit      chan struct{}
	closeOnce sync.Once
	events    [][]byte
}

// outageState is an Outage placed on the gateway's buckets, with what its
// recovery has seen of the load so far.
type outageState struct {
	Outage
	start, minEnd int64 // buckets
	forB, below   int64
	// hotUntil is the first bucket from which the offered load stays below
	// Below, given the attempts that have arrived.
	hotUntil int64
	ended    bool
	end      int64 // the bucket it ended at, once ended
}

// activeAt reports whether the outage answers at bucket t, deciding its end
// once the recovery's condition holds.
func (o *outageState) activeAt(t int64) bool {
	switch {
	case t < o.start:
		return false
	case o.below == 0:
		return t < o.minEnd
	case o.ended:
		return t < o.end
	}
	if end := max(o.minEnd, o.hotUntil+o.forB); t >= end {
		o.ended, o.end = true, end
		return false
	}
	return true
}

// tokens is one key's allowance: a token bucket.
type tokens struct {
	n    float64
	last time.Time
}

// New returns a Gateway configured by cfg, or, if cfg is not valid, an
// error that names the first field that is not and matches ErrConfig
// (Config.Validate). Not valid are: a Window below tally.MinWindow or above
// tally.MaxWindow (zero means tally.DefaultWindow); a negative outage Start,
// Duration, Recovery.Below or Recovery.For; an outage Status or
// FailureStatus that is not zero or 400 to 599; an outage Rate,
// FailureRate, Stream.StallRate or Charge.DropRate outside [0, 1]; a
// Latency.Dist other than constant, uniform or exponential; a negative
// Latency.Mean, Min or Max, or a Max below Min; a Serial below zero or
// above MaxSerial; a negative Allowance, MaxKeys, Stream.Interval,
// StallAfter, StallFor or StallPing; Stream.Events below zero or above
// MaxStreamEvents; and a Charge.Path that does not start with / or is one
// of the gateway's own (/, /stats, /metrics). ParseTimeline returns valid
// configs.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	g := &Gateway{
		cfg:   cfg,
		k:     int64(cfg.Window / tally.Resolution),
		rng:   rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		allow: make(map[string]*tokens),
		quit:  make(chan struct{}),
		lane:  newLane(cfg.Serial),
	}
	g.attempts = tally.NewBuckets(g.k)
	g.accepted = tally.NewBuckets(g.k)
	for _, o := range cfg.Outages {
		s := outageState{
			Outage: o,
			start:  int64(o.Start / tally.Resolution),
			minEnd: int64((o.Start + o.Duration) / tally.Resolution),
		}
		if o.Recovery.Below > 0 {
			s.below, s.forB = int64(o.Recovery.Below), int64(o.Recovery.For/tally.Resolution)
		}
		g.outages = append(g.outages, s)
	}
	g.clients.init(cfg.MaxKeys)
	g.requests.init(cfg.MaxKeys)
	g.initCharges()
	g.events = streamEvents(cfg.Stream.Events)
	g.initMetrics()
	return g, nil
}

// Config returns the gateway's configuration, with its defaults filled in.
func (g *Gateway) Config() Config {
	c := g.cfg
	c.Outages = append([]Outage(nil), c.Outages...)
	return c
}

// Close ends every stall and latency wait in progress and any that start
// later; Serve calls it when it stops. The gateway still answers, without
// stalls or latency. Close is idempotent.
func (g *Gateway) Close() {
	g.closeOnce.Do(func() { close(g.quit) })
}

// attempt is what the gateway reads from one attempt.
type attempt struct {
	client   string
	request  string
	allowKey string
	number   int    // Recoil-Attempt; 0 when absent or malformed
	stream   bool   // a streaming request
	charge   bool   // a request to the charge route
	reject   string // the validator's complaint; empty if it passes
}

// decision is how the gateway answers one attempt.
type decision struct {
	status     int
	code       string // an outage's Code, for the body; empty for the status's own
	fault      fault
	latency    time.Duration
	stall      bool
	drop       bool          // charge: drop the connection after the charge
	retryAfter time.Duration // allowance: until one more request is allowed
	remaining  int           // allowance: requests left after this one
}

// ServeHTTP answers the control paths (GET /, /stats, /metrics,
// /favicon.ico) and counts and answers every other request as an attempt.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/stats":
		g.serveStats(w, r)
		return
	case "/metrics":
		g.metrics.ServeHTTP(w, r)
		return
	case "/":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			servePage(w, r)
			return
		}
	case "/favicon.ico":
		// A browser opening the page asks for it; counting it would start
		// the clock and the outages before the first real attempt. No
		// content: a 404 would be an error in the browser's console.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	now := time.Now()
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for p := g.peakIn.Load(); n > p && !g.peakIn.CompareAndSwap(p, n); p = g.peakIn.Load() {
	}
	var a attempt
	g.read(r, &a)
	arrived, ok := g.serialise(r, now)
	if !ok {
		return // the client went away before its turn in the lane ended: not counted
	}
	d := g.decide(arrived, &a)
	g.record(&a, d)
	g.respond(w, r, &a, d)
	g.duration.Observe(time.Since(now).Seconds())
}

// read fills a from the request: who sent it, which logical request and
// attempt it is, and what the validator and the stream check find in its
// body.
func (g *Gateway) read(r *http.Request, a *attempt) {
	h := r.Header
	a.client = h.Get(g.cfg.ClientHeader)
	if a.client == "" {
		a.client = r.RemoteAddr
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			a.client = host
		}
	}
	a.request = g.requestID(h)
	a.allowKey = a.client
	if g.cfg.AllowanceHeader != "" {
		if k := h.Get(g.cfg.AllowanceHeader); k != "" {
			a.allowKey = k
		}
	}
	in, err := hop.ParseRequest(h)
	if err != nil {
		g.hopBad.Add(1)
	}
	a.number = in.Attempt

	path := r.URL.Path
	messages := strings.HasSuffix(path, "/v1/messages")
	a.stream = strings.HasSuffix(path, "/stream")
	a.charge = path == g.cfg.Charge.Path
	if r.Body == nil || r.Body == http.NoBody || (g.cfg.RejectField == "" && !messages) {
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxBody))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body)) // for the charge's fingerprint
	stream, where, found := scanBody(body, g.cfg.RejectField)
	if messages && stream {
		a.stream = true
	}
	if found {
		a.reject = rejection(where, g.cfg.RejectField)
	}
}

// requestID is the logical request an attempt belongs to: the request
// header's value, or its idempotency key.
func (g *Gateway) requestID(h http.Header) string {
	if id := h.Get(g.cfg.RequestHeader); id != "" {
		return id
	}
	if id := h.Get("Idempotency-Key"); id != "" {
		return id
	}
	return h.Get("X-Idempotency-Key")
}

// decide counts one attempt that arrived at now and decides its answer.
// The time-dependent state lives under one lock, so the counts, the peak
// and the timeline agree exactly whatever the concurrency.
func (g *Gateway) decide(now time.Time, a *attempt) decision {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.begun {
		g.begun, g.epoch = true, now
	}
	b := max(int64(now.Sub(g.epoch)/tally.Resolution), 0)
	t := max(b, g.attempts.Newest()) // the timeline only moves forward

	d := decision{status: http.StatusOK}
	for i := range g.outages {
		if o := &g.outages[i]; o.activeAt(t) {
			if o.Rate >= 1 || g.rng.Float64() < o.Rate {
				d.status, d.fault, d.code = o.Status, faultOutage, o.Code
			}
			break
		}
	}
	g.attempts.Add(b)
	g.trackLoad()

	if d.fault == faultNone && g.cfg.Allowance > 0 {
		if ok, wait, left := g.admit(now, a.allowKey); ok {
			d.remaining = left
		} else {
			d.status, d.fault, d.retryAfter = http.StatusTooManyRequests, faultAllowance, wait
		}
	}
	if d.fault == faultNone && a.reject != "" {
		d.status, d.fault = http.StatusBadRequest, faultValidator
	}
	if d.fault == faultNone && g.cfg.FailureRate > 0 && g.rng.Float64() < g.cfg.FailureRate {
		d.status, d.fault = g.cfg.FailureStatus, faultFailure
	}
	if d.fault != faultOutage && d.fault != faultAllowance {
		d.latency = g.latency()
		if s := stretch(g.inFlight.Load(), g.cfg.Latency.Knee); s > 1 {
			d.latency = time.Duration(float64(d.latency) * s)
		}
	}
	if d.fault == faultNone {
		if a.stream && g.cfg.Stream.StallRate > 0 && g.rng.Float64() < g.cfg.Stream.StallRate {
			d.stall = true
		}
		if a.charge && g.cfg.Charge.DropRate > 0 && g.rng.Float64() < g.cfg.Charge.DropRate {
			d.drop = true
		}
		g.accepted.Add(b)
	}
	return d
}

// trackLoad updates, after an attempt was added, when the offered load
// falls below each recovering outage's threshold. Only attempts that can
// matter are looked at: those whose windows end at or after the earliest
// instant the outage could end by (its minimum end less the time the load
// must stay low).
func (g *Gateway) trackLoad() {
	w := g.attempts
	for i := range g.outages {
		o := &g.outages[i]
		if o.below == 0 || o.ended || w.Newest()+g.k <= o.minEnd-o.forB || w.Recent() < o.below {
			continue
		}
		o.hotUntil = max(o.hotUntil, w.CoolFrom(o.below))
	}
}

// admit takes one request from key's allowance at now, or reports how long
// until one is available. A token bucket of Allowance tokens refilled at
// Allowance per minute, as providers meter requests per minute.
func (g *Gateway) admit(now time.Time, key string) (ok bool, wait time.Duration, left int) {
	per := float64(g.cfg.Allowance)
	bk := g.allow[key]
	if bk == nil {
		if len(g.allow) >= g.cfg.MaxKeys {
			key = "" // keys beyond the bound share one allowance
			bk = g.allow[key]
		}
		if bk == nil {
			bk = &tokens{n: per, last: now}
			g.allow[strings.Clone(key)] = bk
		}
	}
	if now.After(bk.last) {
		bk.n = min(per, bk.n+now.Sub(bk.last).Minutes()*per)
		bk.last = now
	}
	if bk.n >= 1 {
		bk.n--
		return true, 0, int(bk.n)
	}
	return false, time.Duration((1 - bk.n) / per * float64(time.Minute)), 0
}

// latency draws the wait before answering.
func (g *Gateway) latency() time.Duration {
	l := g.cfg.Latency
	if t := l.Tail; t.Rate > 0 && g.rng.Float64() < t.Rate {
		return t.Min + time.Duration(g.rng.Int64N(int64(t.Max-t.Min)+1))
	}
	switch l.Dist {
	case Uniform:
		if l.Max <= l.Min {
			return l.Min
		}
		return l.Min + time.Duration(g.rng.Int64N(int64(l.Max-l.Min)+1))
	case Exponential:
		if l.Mean <= 0 {
			return l.Min
		}
		d := l.Min + time.Duration(g.rng.ExpFloat64()*float64(l.Mean))
		if l.Max > 0 && d > l.Max {
			d = l.Max
		}
		return d
	default:
		return l.Mean
	}
}

// record counts an attempt per client, per logical request, by attempt
// number and by status.
func (g *Gateway) record(a *attempt, d decision) {
	ok := d.fault == faultNone
	g.clients.add(a.client, ok, a.number)
	if a.request != "" {
		g.requests.add(a.request, ok, a.number)
	}
	g.numbers.Observe(a.number)
	g.responses[d.fault][d.status].Add(1)
	if d.stall {
		g.stalls.Add(1)
	}
}

// wait waits d, and reports false if the client went away or the gateway
// closed first.
func (g *Gateway) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-g.quit:
		return true // answer at once
	}
}

// retryAfterSeconds is a wait as Retry-After's whole seconds, rounded up.
func retryAfterSeconds(d time.Duration) int {
	return max(int(math.Ceil(d.Seconds())), 1)
}
