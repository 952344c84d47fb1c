package load

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/internal/hist"
	"github.com/recoil-go/recoil/tools/internal/textfmt"
)

// Result is what a run's callers counted: a plain value. Attempts and the
// peak are counted as the attempts leave, so against a gateway the attempts
// match what it counts on arrival, and the peak does up to the spread of
// the network's delay (a new connection's first attempt arrives later than
// one on a connection already open).
type Result struct {
	// Policy is the policy's name; URL where the requests went.
	Policy, URL string
	// Callers is the number of closed-loop callers; 0 for an open loop.
	Callers int
	// Rate is the open-loop arrival rate per second; 0 for a closed loop.
	Rate float64
	// UntilAccepted reports whether calls repeated until accepted.
	UntilAccepted bool
	// NoIdempotencyKey reports that requests of a method that is not
	// idempotent were sent without an Idempotency-Key and retried anyway
	// (Config.NoIdempotencyKey).
	NoIdempotencyKey bool
	// Seed is the run's seed.
	Seed uint64

	// Calls counts the calls begun (see Config); OK those that succeeded,
	// Failed those that ended without success, Unfinished those the run's
	// end cut off (its duration, its context, or MaxRequests).
	Calls, OK, Failed, Unfinished int64
	// Resubmitted counts, with UntilAccepted, the logical requests begun
	// again after one was not accepted.
	Resubmitted int64
	// Requests counts logical requests (RoundTrips), Accepted those
	// accepted: a 2xx whose body was read to its end.
	Requests, Accepted int64
	// Attempts counts the attempts sent.
	Attempts int64
	// Stops counts the logical requests that were not accepted, by why:
	// the Transport's stop reason ("attempts exhausted", "permanent
	// error", "circuit open", "retry budget exhausted", "deadline", …),
	// "timeout" when the logical request's Timeout ran out during an
	// attempt or a wait, or "body failed".
	Stops map[string]int
	// LikelyWon prices the logical requests a guard stopped, by the reason
	// in Stops ("circuit open", "retry budget exhausted"): the answers
	// their refused attempts would likely have had, at the success rate of
	// the attempts sent just before (about the last 50). It is what each
	// guard cost, to set beside what it saved.
	LikelyWon map[string]float64
	// Statuses counts attempts by the status that came back; 0 counts
	// attempts that got no response.
	Statuses map[int]int64
	// TransportErrors counts the attempts that got no response, by the
	// kind of error (TransportErrorKind: "connection refused", "DNS lookup
	// failed", "TLS error", "timeout", …). Attempts the run's end cut off
	// are not counted.
	TransportErrors map[string]int64
	// FirstTransportError is the message of the first error counted in
	// TransportErrors, as an example: "dial tcp 127.0.0.1:1: connect:
	// connection refused".
	FirstTransportError string

	// Window is the span the peak is counted over.
	Window time.Duration
	// Peak is the most attempts sent within any span of Window (sliding,
	// 1 ms resolution; tally.Window), and PeakAt when the first such
	// span began, since the first attempt.
	Peak   int64
	PeakAt time.Duration

	// AllOK reports whether every call succeeded, and AllOKAt when the
	// last of them did, since the run began: the time until every caller
	// was through.
	AllOK   bool
	AllOKAt time.Duration
	// Latency is that of every finished call, successful or not, from its
	// beginning to its end (with UntilAccepted, from its first logical
	// request's beginning to its last's end), waits and pauses included.
	Latency Percentiles
	// Elapsed is the run's duration.
	Elapsed time.Duration
	// MaxCallAttempts is the most attempts one logical request made, on
	// every target and hedge together: what the policy's MaxAttempts
	// bounds.
	MaxCallAttempts int
	// Targets counts, under a policy with a Fallback, what the logical
	// requests did with each target, in the chain's order; nil without.
	Targets []TargetCount
	// Hedges counts the hedges started, RefusedHedges those the policy
	// did not start (its budget, limiter or breaker refused), and Wasted
	// the attempts that were answered, or were still running, after
	// another had answered: work done for nobody.
	Hedges, RefusedHedges, Wasted int64

	// Limits is, under a policy whose Limiter moves its limit (an adaptive
	// limiter: limit.Adaptive), the limit and the slots in use sampled
	// every Window over the run; nil under any other.
	Limits []LimitSample

	// Stopped says what ended the run before every call was done: one of
	// StoppedMaxRequests, StoppedDuration, StoppedCanceled; empty if none
	// did.
	Stopped string
}

// LimitSample is an adaptive limiter's state at one moment of a run.
type LimitSample struct {
	// At is when, since the run began.
	At time.Duration
	// Limit is the limiter's limit then, and InUse the slots held.
	Limit, InUse int
}

// LimitSummary says in words how an adaptive limiter's limit moved over
// the run: where it began and ended, and its range and mean over the
// second half ("20 at the start, 18 at the end; 16–21, mean 18.2, over the
// second half"); empty without samples.
func (r *Result) LimitSummary() string {
	if len(r.Limits) == 0 {
		return ""
	}
	first, last := r.Limits[0], r.Limits[len(r.Limits)-1]
	half := r.Limits[len(r.Limits)/2:]
	lo, hi, sum := half[0].Limit, half[0].Limit, 0
	for _, s := range half {
		lo, hi, sum = min(lo, s.Limit), max(hi, s.Limit), sum+s.Limit
	}
	return fmt.Sprintf("%d at the start, %d at the end; %d–%d, mean %.1f, over the second half",
		first.Limit, last.Limit, lo, hi, float64(sum)/float64(len(half)))
}

// maxLimitSamples bounds Result.Limits: a run longer than that many
// windows is sampled less often.
const maxLimitSamples = 5000

// adaptiveLimiter is a limiter whose limit moves (limit.Adaptive).
type adaptiveLimiter interface {
	Limit() int
	InUse() int
}

// LimitMoves reports whether p's limiter moves its limit (an adaptive
// limiter), so that a run samples it into Result.Limits.
func LimitMoves(p Policy) bool {
	_, ok := limitOf(p.Policy)
	return ok
}

// limitOf returns p's limiter when its limit moves.
func limitOf(p *recoil.Policy) (adaptiveLimiter, bool) {
	if p == nil || p.Limiter == nil {
		return nil, false
	}
	l, ok := p.Limiter.(adaptiveLimiter)
	return l, ok
}

// sampleLimit records l's limit every Window (or less often, for a run
// of more than maxLimitSamples windows) until stop is closed.
func (r *run) sampleLimit(l adaptiveLimiter, stop <-chan struct{}) {
	every := max(r.cfg.Window, r.cfg.Duration/maxLimitSamples)
	t := time.NewTicker(every)
	defer t.Stop()
	sample := func() {
		s := LimitSample{At: time.Since(r.start), Limit: l.Limit(), InUse: l.InUse()}
		r.mu.Lock()
		if len(r.limits) < maxLimitSamples+1 {
			r.limits = append(r.limits, s)
		}
		r.mu.Unlock()
	}
	sample()
	for {
		select {
		case <-stop:
			sample()
			return
		case <-t.C:
			sample()
		}
	}
}

// TargetCount is what a run's logical requests did with one target of a
// fallback chain.
type TargetCount struct {
	// Name is the target's name.
	Name string `json:"name"`
	// Attempts counts the attempts sent to it.
	Attempts int64 `json:"attempts"`
	// Ended counts the logical requests that ended on it, answered or not.
	Ended int64 `json:"ended"`
	// Left counts the logical requests that left it or passed it over, by
	// why ("overloaded", "model not found", "cooling down", …).
	Left map[string]int64 `json:"left"`
}

// Percentiles are nearest-rank percentiles of a set of durations, and
// their count. The percentiles are read from a log-linear histogram, so a
// run holds its latencies in fixed memory: each is within 0.8 % of the
// true value; the count and the maximum are exact.
type Percentiles struct {
	Count              int
	P50, P90, P99, Max time.Duration
}

// PerCall returns the attempts per call.
func (r *Result) PerCall() float64 {
	if r.Calls == 0 {
		return 0
	}
	return float64(r.Attempts) / float64(r.Calls)
}

// Goodput returns the successful calls per second of the run.
func (r *Result) Goodput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// Load describes the run's load: "4 callers, until accepted" or "50/s",
// with ", no idempotency keys" when they were not sent.
func (r *Result) Load() string {
	s := strconv.Itoa(r.Callers) + " callers"
	switch {
	case r.Rate > 0:
		s = strconv.FormatFloat(r.Rate, 'g', -1, 64) + "/s"
	case r.Callers == 1:
		s = "1 caller"
	}
	if r.UntilAccepted {
		s += ", until accepted"
	}
	if r.NoIdempotencyKey {
		s += ", no idempotency keys"
	}
	return s
}

// WriteTable writes results as the simulator's table (package sim's
// WriteText): a heading, then a row per result with its calls (ok,
// failed, unfinished), attempts in all and per call, the peak per window,
// the latency percentiles of the calls, goodput, and — when some result had
// every call succeed — the time until every call had ("not all" for a
// result that did not). It states what was counted and does not grade it.
func WriteTable(w io.Writer, results ...*Result) error {
	if len(results) == 0 {
		return nil
	}
	r0 := results[0]
	if _, err := fmt.Fprintf(w, "%s — %s\nseed %d · peak window %v · attempts counted at the callers\n\n",
		r0.URL, r0.Load(), r0.Seed, r0.Window); err != nil {
		return err
	}
	allCol := false
	for _, r := range results {
		allCol = allCol || r.AllOK
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := fmt.Sprintf("policy\tcalls\tok\tfailed\tunfinished\tattempts\tper call\tpeak/%v\tp50\tp90\tp99\tmax\tgoodput/s", r0.Window)
	if allCol {
		head += "\tall ok at"
	}
	fmt.Fprintln(tw, head)
	for _, r := range results {
		row := fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s", r.Policy,
			r.Calls, r.OK, r.Failed, r.Unfinished, r.Attempts, ffloat(r.PerCall(), 2), r.Peak,
			fmtDur(r.Latency.P50), fmtDur(r.Latency.P90), fmtDur(r.Latency.P99), fmtDur(r.Latency.Max),
			ffloat(r.Goodput(), 2))
		if allCol {
			all := "not all"
			if r.AllOK {
				all = fmtDur(r.AllOKAt)
			}
			row += "\t" + all
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
}

// stoppedWords says what ended a run, for the notes.
var stoppedWords = map[string]string{
	StoppedDuration:    "ended at its -duration",
	StoppedMaxRequests: "ended at its -requests",
	StoppedCanceled:    "interrupted",
}

// WriteNotes writes, a line per result, what the table has no room for:
// the logical requests and why those not accepted stopped, the statuses
// the attempts got ("no response" for none), why those without a response
// got none (the kinds of transport error, with the first one's message, and
// the attempts the run's end cut off), and what ended the run.
func WriteNotes(w io.Writer, results ...*Result) error {
	for _, r := range results {
		parts := []string{fmt.Sprintf("%d logical requests, %d accepted", r.Requests, r.Accepted)}
		if r.Resubmitted > 0 {
			parts[0] += fmt.Sprintf(", %d begun again", r.Resubmitted)
		}
		if len(r.Stops) > 0 {
			parts = append(parts, "not accepted: "+textfmt.Counts(r.Stops))
		}
		if len(r.LikelyWon) > 0 {
			parts = append(parts, "turned away by a guard, likely to have been answered: "+textfmt.GuardCost(r.LikelyWon))
		}
		st := map[string]int{}
		for code, n := range r.Statuses {
			name := strconv.Itoa(code)
			if code == 0 {
				name = "no response"
			}
			st[name] = int(n)
		}
		if len(st) > 0 {
			parts = append(parts, "attempts by status: "+textfmt.Counts(st))
		}
		if why := noResponse(r); why != "" {
			parts = append(parts, "why no response: "+why)
		}
		if r.MaxCallAttempts > 0 && (len(r.Targets) > 0 || r.Hedges > 0 || r.RefusedHedges > 0) {
			// What bounds a chain or a hedge: said where there is one.
			parts = append(parts, fmt.Sprintf("most attempts in one logical request: %d", r.MaxCallAttempts))
		}
		for _, t := range r.Targets {
			tp := fmt.Sprintf("target %s: %d attempts, %d requests ended on it", t.Name, t.Attempts, t.Ended)
			if len(t.Left) > 0 {
				tp += ", left: " + byCount(t.Left)
			}
			parts = append(parts, tp)
		}
		if r.Hedges > 0 || r.RefusedHedges > 0 {
			parts = append(parts, fmt.Sprintf("hedges: %d started, %d refused, %d attempts answered for nobody", r.Hedges, r.RefusedHedges, r.Wasted))
		}
		if len(r.Limits) > 0 {
			parts = append(parts, "adaptive limit: "+r.LimitSummary())
		}
		if r.Stopped != "" {
			words, ok := stoppedWords[r.Stopped]
			if !ok {
				words = "stopped: " + r.Stopped
			}
			if r.Unfinished > 0 {
				words += fmt.Sprintf(", cutting off the %d unfinished", r.Unfinished)
			}
			parts = append(parts, words)
		}
		if _, err := fmt.Fprintf(w, "%s: %s\n", r.Policy, strings.Join(parts, "; ")); err != nil {
			return err
		}
	}
	return nil
}

// noResponse says why the attempts that got no response got none: the
// kinds of transport error (with the first one's message), and those the
// run's end cut off; "" if every attempt got a response.
func noResponse(r *Result) string {
	var errs int64
	for _, n := range r.TransportErrors {
		errs += n
	}
	var parts []string
	if len(r.TransportErrors) > 0 {
		parts = append(parts, fmt.Sprintf("%s (first: %s)", textfmt.Counts(r.TransportErrors), r.FirstTransportError))
	}
	if cut := r.Statuses[0] - errs; cut > 0 {
		parts = append(parts, fmt.Sprintf("cut off by the run's end %d", cut))
	}
	return strings.Join(parts, ", ")
}

func ffloat(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// fmtDur formats a duration as every recoil table does.
func fmtDur(d time.Duration) string { return textfmt.Duration(d) }

// MarshalJSON writes the result in the convention of every recoil -json
// output (package internal/textfmt): durations in float milliseconds in
// fields ending in _ms, stop reasons as recoil.Reason.String().
func (r *Result) MarshalJSON() ([]byte, error) {
	type lat struct {
		Count int     `json:"count"`
		P50   float64 `json:"p50_ms"`
		P90   float64 `json:"p90_ms"`
		P99   float64 `json:"p99_ms"`
		Max   float64 `json:"max_ms"`
	}
	statuses := make(map[string]int64, len(r.Statuses))
	for code, n := range r.Statuses {
		statuses[strconv.Itoa(code)] = n
	}
	type limitJSON struct {
		AtMS  float64 `json:"at_ms"`
		Limit int     `json:"limit"`
		InUse int     `json:"in_use"`
	}
	var limits []limitJSON
	for _, l := range r.Limits {
		limits = append(limits, limitJSON{textfmt.Millis(l.At), l.Limit, l.InUse})
	}
	var all *float64
	if r.AllOK {
		v := textfmt.Millis(r.AllOKAt)
		all = &v
	}
	return json.Marshal(struct {
		Policy        string             `json:"policy"`
		URL           string             `json:"url"`
		Callers       int                `json:"callers"`
		Rate          float64            `json:"rate"`
		UntilAccepted bool               `json:"until_accepted"`
		NoKeys        bool               `json:"no_idempotency_keys"`
		Seed          uint64             `json:"seed"`
		Calls         int64              `json:"calls"`
		OK            int64              `json:"ok"`
		Failed        int64              `json:"failed"`
		Unfinished    int64              `json:"unfinished"`
		Resubmitted   int64              `json:"resubmitted"`
		Requests      int64              `json:"requests"`
		Accepted      int64              `json:"accepted"`
		Attempts      int64              `json:"attempts"`
		PerCall       float64            `json:"per_call"`
		Stops         map[string]int     `json:"stops"`
		LikelyWon     map[string]float64 `json:"likely_won,omitempty"`
		Statuses      map[string]int64   `json:"statuses"`
		Transport     map[string]int64   `json:"transport_errors"`
		FirstErr      string             `json:"first_transport_error,omitempty"`
		WindowMS      float64            `json:"window_ms"`
		Peak          int64              `json:"peak"`
		PeakAtMS      float64            `json:"peak_at_ms"`
		AllOK         bool               `json:"all_ok"`
		AllOKAtMS     *float64           `json:"all_ok_at_ms"`
		Latency       lat                `json:"latency"`
		Goodput       float64            `json:"goodput_per_s"`
		ElapsedMS     float64            `json:"elapsed_ms"`
		MaxCall       int                `json:"max_call_attempts"`
		Targets       []TargetCount      `json:"targets,omitempty"`
		Hedges        int64              `json:"hedges"`
		RefusedHedges int64              `json:"refused_hedges"`
		Wasted        int64              `json:"wasted"`
		Limits        []limitJSON        `json:"limits,omitempty"`
		Stopped       string             `json:"stopped,omitempty"`
	}{
		r.Policy, r.URL, r.Callers, r.Rate, r.UntilAccepted, r.NoIdempotencyKey, r.Seed,
		r.Calls, r.OK, r.Failed, r.Unfinished, r.Resubmitted, r.Requests, r.Accepted, r.Attempts, r.PerCall(),
		r.Stops, r.LikelyWon, statuses, r.TransportErrors, r.FirstTransportError, textfmt.Millis(r.Window), r.Peak, textfmt.Millis(r.PeakAt), r.AllOK, all,
		lat{r.Latency.Count, textfmt.Millis(r.Latency.P50), textfmt.Millis(r.Latency.P90), textfmt.Millis(r.Latency.P99), textfmt.Millis(r.Latency.Max)},
		r.Goodput(), textfmt.Millis(r.Elapsed), r.MaxCallAttempts, r.Targets, r.Hedges, r.RefusedHedges, r.Wasted, limits, r.Stopped,
	})
}

// Diagnosis says in words what went wrong in the run, from what its
// attempts got: how many got no response and why (the kinds of transport
// error, with the first one's message), how many got an error status and
// which; failing both, why the logical requests stopped. It is empty if
// nothing failed. "recoil load" prints it when nothing was accepted.
func (r *Result) Diagnosis() string {
	var parts []string
	if n := sum(r.TransportErrors); n > 0 {
		s := fmt.Sprintf("%d of %d attempts got no response: %s", n, r.Attempts, byCount(r.TransportErrors))
		if r.FirstTransportError != "" {
			s += fmt.Sprintf(" (the first: %s)", r.FirstTransportError)
		}
		parts = append(parts, s)
	}
	bad := map[string]int64{}
	for code, n := range r.Statuses {
		if code != 0 && (code < 200 || code > 299) {
			bad[strconv.Itoa(code)] = n
		}
	}
	if n := sum(bad); n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d attempts got an error status: %s", n, r.Attempts, byCount(bad)))
	}
	if len(parts) == 0 && len(r.Stops) > 0 {
		stops := make(map[string]int64, len(r.Stops))
		for k, n := range r.Stops {
			stops[k] = int64(n)
		}
		parts = append(parts, "the logical requests stopped: "+byCount(stops))
	}
	if len(parts) == 0 && r.Requests > 0 && r.Attempts == 0 {
		parts = append(parts, "no attempt was sent")
	}
	return strings.Join(parts, "; ")
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// byCount writes counts most first, then by key: "connection refused ×6,
// timeout ×2".
func byCount(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
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
		NoIdempotencyKey:    r.cfg.NoIdempotencyKey && !recoilhttp.IdempotentMethod(r.method),
		Seed:                r.cfg.Seed,
		Calls:               r.calls,
		OK:                  r.ok,
		Failed:              r.failed,
		Unfinished:          r.calls - r.ok - r.failed,
		Requests:            r.started.Load(),
		Accepted:            r.accepted.Load(),
		Attempts:            r.attempts.Load(),
		Stops:               r.stops,
		LikelyWon:           r.likelyWon(),
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
	res.MaxCallAttempts = r.maxAttempts
	res.Limits = r.limits
	res.Hedges, res.RefusedHedges, res.Wasted = r.hedges, r.refusedHedges, r.wasted
	for _, n := range r.order {
		res.Targets = append(res.Targets, *r.targets[n])
	}
	return res
}

// percentiles summarises the durations h counted.
func percentiles(h *hist.Hist) Percentiles {
	return Percentiles{Count: int(h.Count()), P50: h.Quantile(0.50), P90: h.Quantile(0.90), P99: h.Quantile(0.99), Max: h.Max()}
}
