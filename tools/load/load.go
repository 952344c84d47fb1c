package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/internal/hist"
	"github.com/recoil-go/recoil/tools/tally"
)

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
	recent    recent             // the success rate of the attempts sent lately
	likely    map[string]float64 // guards' refusals priced at it, by stop reason
	transport map[string]int64   // attempts without a response, by TransportErrorKind
	firstErr  string             // the first of them
	lastOK    time.Duration      // when the last call succeeded

	maxAttempts                   int
	hedges, refusedHedges, wasted int64
	targets                       map[string]*TargetCount // by name, under a Fallback
	order                         []string                // the chain's order
	limits                        []LimitSample           // an adaptive limiter's limit over time
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
	r := newRun(cfg)
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
	if l, ok := limitOf(cfg.Policy.Policy); ok {
		progress.Go(func() { r.sampleLimit(l, stopProgress) })
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

// spent reports whether the bound allows no more logical requests, and if
// so marks the run stopped by it, as reserve does when it refuses one: a
// caller about to pause before its next logical request checks first, so
// that the run ends when its last request does and not a pause later, and
// no call's latency holds a pause after its last request.
func (r *run) spent() bool {
	if r.started.Load() < int64(r.cfg.MaxRequests) {
		return false
	}
	r.capped.Store(true)
	return true
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
				if r.spent() {
					break // no pause before a request that cannot start
				}
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
			if r.spent() {
				return // no pause before a call that cannot start
			}
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
	if !recoilhttp.IdempotentMethod(r.method) && !r.cfg.NoIdempotencyKey && req.Header.Get("Idempotency-Key") == "" {
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

// newRun returns the counters of a run of cfg, with one per target of
// the policy's Fallback.
func newRun(cfg Config) *run {
	r := &run{
		cfg:       cfg,
		method:    cfg.Method,
		window:    tally.NewWindow(cfg.Window),
		stops:     map[string]int{},
		statuses:  map[int]int64{},
		likely:    map[string]float64{},
		transport: map[string]int64{},
	}
	if p := cfg.Policy.Policy; p != nil && p.Fallback != nil {
		r.targets = make(map[string]*TargetCount, len(p.Fallback.Targets))
		for _, t := range p.Fallback.Targets {
			r.targets[t.Name] = &TargetCount{Name: t.Name, Left: map[string]int64{}}
			r.order = append(r.order, t.Name)
		}
	}
	return r
}

func (r *run) stop(why string) {
	r.mu.Lock()
	r.stops[why]++
	r.mu.Unlock()
}
