package load

import (
	"context"
	"errors"
	"net/http"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilhttp"
)

// observe receives the Transport's summary of each logical request, and
// counts why the ones that failed stopped.
func (r *run) observe(_ context.Context, s recoilhttp.Summary) {
	r.countCall(&s.Summary)
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
		r.mu.Lock()
		r.stops[s.Reason.String()]++
		r.priceGuard(s.Reason)
		r.mu.Unlock()
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
	if err == nil || !errors.Is(context.Cause(req.Context()), errDuration) {
		c.r.recent.add(status >= 200 && status <= 299)
	}
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

// countCall counts what one logical request did with its targets and
// hedges.
func (r *run) countCall(s *recoil.Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maxAttempts = max(r.maxAttempts, s.Attempts)
	r.hedges += int64(s.Hedges)
	r.refusedHedges += int64(s.RefusedHedges)
	r.wasted += int64(s.Wasted)
	for _, t := range s.Targets {
		c := r.targets[t.Target]
		if c == nil {
			continue // not a target of the chain: nothing to count it under
		}
		c.Attempts += int64(t.Attempts)
		if t.Left == "" {
			c.Ended++
		} else {
			c.Left[t.Left]++
		}
	}
}
