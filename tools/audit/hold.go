package audit

import (
	"fmt"
	"math"
	"time"
)

// hold is a bound on time in seconds (+Inf: none), the path it is
// reached on, and what bounds it.
type hold struct {
	s    float64
	path []string
	by   string
	why  string
}

// hold returns the longest a call into service s can take: its own
// latency plus its slowest edge's hold (the slowest path). Each edge's
// call takes at most Attempts attempts — each bounded by the per-try
// timeout or the callee's own hold — plus its longest waits (or, hedged,
// the last copy's delay plus one attempt), and at most its timeout.
func (m *Mesh) hold(out map[string][]int, memo map[string]hold, s string) hold {
	if h, ok := memo[s]; ok {
		return h
	}
	svc := m.service(s)
	own := 0.0
	if svc != nil && svc.HasLatency {
		own = svc.Latency.Seconds()
	}
	best := hold{s: own, path: []string{s}}
	if svc != nil && svc.HasLatency {
		best.by = fmt.Sprintf("%s's latency, %v (%s)", s, svc.Latency, svc.At)
	}
	if len(out[s]) == 0 && (svc == nil || !svc.HasLatency) {
		best = hold{s: math.Inf(1), path: []string{s}, why: fmt.Sprintf("%s calls nothing and has no latency: it can hang", s)}
	}
	for _, i := range out[s] {
		e := &m.Edges[i]
		h := m.hold(out, memo, e.To)
		rs := e.retries()
		for k := len(rs) - 1; k >= 0; k-- { // the sidecar wraps the callee, the caller wraps both
			h = rs[k].holdThrough(h)
		}
		h.s += own
		h.path = append([]string{s}, h.path...)
		if h.s > best.s || len(best.path) == 1 {
			best = h
		}
	}
	memo[s] = best
	return best
}

// holdThrough returns the longest a call through r takes when each of its
// attempts can take what callee says: its attempts — each bounded by the
// per-try timeout or the callee's hold — plus its longest waits, at most
// its timeout. Hedged, the copies are not cut short: gRPC sends them
// HedgeDelay apart and Envoy at each per-try timeout, and the last runs as
// long as the callee holds; Envoy's failures that come back before the
// per-try timeout are retried after their waits as before, so its hold is
// the longer of the two.
func (r *Retry) holdThrough(callee hold) hold {
	out := hold{s: callee.s, path: callee.path, by: callee.by, why: callee.why}
	attempts := r.holdAttempts()
	if r.Hedged {
		out.s += float64(attempts-1) * r.HedgeDelay.Seconds()
	}
	if !r.Hedged || r.Kind == KindEnvoy {
		seq := hold{s: callee.s, path: callee.path, by: callee.by, why: callee.why}
		if r.PerTry > 0 && r.PerTry.Seconds() < seq.s {
			seq.s = r.PerTry.Seconds()
			seq.by, seq.why = fmt.Sprintf("per-try timeout %v (%s)", r.PerTry, r.PerTryAt), ""
		}
		seq.s *= float64(attempts)
		for k := 1; k < attempts; k++ {
			seq.s += r.wait(k).Seconds()
		}
		if !r.Hedged || seq.s > out.s {
			out = seq
		}
	}
	if r.Timeout > 0 && r.Timeout.Seconds() < out.s {
		out.s = r.Timeout.Seconds()
		out.by, out.why = fmt.Sprintf("timeout %v (%s)", r.Timeout, r.TimeoutAt), ""
		if r.TimeoutDefault {
			out.by = fmt.Sprintf("Envoy's default route timeout, %v (route at %s)", r.Timeout, r.TimeoutAt)
		}
	}
	return out
}

// holdAttempts is the attempts the hold counts: Attempts if the edge
// retries anything — a failure class, or a recoil policy's timeouts —
// else one.
func (r *Retry) holdAttempts() int {
	if r.Hedged || len(r.On) > 0 || (r.Kind == KindRecoil && len(r.RetryOn) > 0 && r.RetryOn[0] == "timeouts") {
		return r.Attempts
	}
	return 1
}

// findings returns what edge e lacks, and its sidecar.
func findings(e *Edge) []Finding {
	fs := retryFindings(e, &e.Retry, "")
	if e.Sidecar != nil {
		fs = append(fs, retryFindings(e, e.Sidecar, "the sidecar: ")...)
	}
	return fs
}

// retryFindings returns what one retry layer of edge e lacks; who prefixes
// the messages of a sidecar's.
func retryFindings(e *Edge, r *Retry, who string) []Finding {
	if r.Kind == KindNone {
		return nil
	}
	var fs []Finding
	add := func(check string, at Source, format string, args ...any) {
		if at.File == "" {
			at = r.At
		}
		fs = append(fs, Finding{Check: check, Edge: e.Name(), At: at, Message: who + fmt.Sprintf(format, args...)})
	}
	retries := r.holdAttempts() > 1
	if r.Capped {
		add(CheckCapped, r.AttemptsAt, "maxAttempts %d: gRPC clients cap it at %d, so %d is what the audit counts", r.Asked, grpcMaxAttempts, r.Attempts)
	}
	if retries && r.Budget.Kind == "" {
		add(CheckBudget, r.Budget.At, "%d attempts per call, no retry budget — %s. A failure that lasts gets ×%d the load for as long as it lasts", r.Attempts, r.Budget.Describe, r.Attempts)
	}
	if r.Timeout == 0 && r.PerTry == 0 {
		add(CheckDeadline, r.TimeoutAt, "%s", noDeadline(r, e.To))
	}
	if retries && !r.Jitter && !r.Hedged {
		add(CheckJitter, r.JitterAt, "%s: callers that failed together retry together", r.JitterNote)
	}
	if n, total := r.attemptsInTimeout(); retries && n < r.Attempts {
		add(CheckTimeouts, r.TimeoutAt, "%d attempts of up to %v each, with their waits, take up to %v, beyond the %v timeout: a callee that times out gets %d attempts, not %d — the retries after that never run",
			r.Attempts, r.PerTry, total.Round(time.Millisecond), r.Timeout, n, r.Attempts)
	}
	return fs
}

// noDeadline says why nothing bounds r's call to callee in time.
func noDeadline(r *Retry, callee string) string {
	switch r.Kind {
	case KindEnvoy:
		return "the route's timeout is 0s, which turns it off, and there is no per_try_timeout"
	case KindGRPC:
		return "the methodConfig has no timeout: unless the calling code sets a deadline, a call waits as long as " + callee + " does"
	case KindIstio:
		return "no timeout (Istio leaves an http route's timeout off by default) and no perTryTimeout"
	}
	return "neither timeout nor attempt_timeout: only the caller's context bounds the call"
}

// attemptsInTimeout returns how many of r's attempts start before its
// timeout when each runs to its per-try timeout after its wait, and the
// time all of them would take; Attempts when nothing bounds both.
func (r *Retry) attemptsInTimeout() (int, time.Duration) {
	if r.PerTry <= 0 || r.Timeout <= 0 || r.Hedged {
		return r.Attempts, 0
	}
	var t time.Duration
	n := 0
	for k := 0; k < r.Attempts; k++ {
		if k > 0 && k-1 < len(r.Waits) {
			t += r.Waits[k-1] // the schedule's own: a client gives up on a server's wait past its deadline
		}
		if t < r.Timeout {
			n++
		}
		t += r.PerTry
	}
	return n, t
}
