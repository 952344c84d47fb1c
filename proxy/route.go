package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/fleet"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/policyspec"
)

// route is a built Route: its policy, fallback and Transport, and what the
// page shows of it. A route whose configuration a reload leaves unchanged
// is kept, with everything it learned.
type route struct {
	name      string // "openai/gpt-4o", "anthropic/*"
	protocol  string
	prefix    string // the client-facing path prefix the first target's base URL stands for
	base      *url.URL
	transport *recoilhttp.Transport
	send      http.RoundTripper // transport, or what Options.Trace made of it
	policy    *recoil.Policy
	fallback  *recoil.Fallback
	targets   []Target
	allowance *fleet.Allowance
	retries   int // the policy's retries: the budget of a request's account
	mw        *recoilhttp.Middleware
	ident     string // the configuration it was built from, for reloads

	calls, failed, attempts atomic.Int64
	stormRefused            atomic.Int64 // SDK retries refused: their request's budget was spent
	sdkRetries              atomic.Int64 // SDK retries that arrived
	retried                 atomic.Int64 // calls the proxy retried or moved
	mu                      sync.Mutex
	perTarget               map[string]int64 // attempts per target
}

// clientPrefix is the path a protocol's clients put before the API's own:
// OpenAI's base URLs end in /v1, Anthropic's stop before it.
func clientPrefix(protocol string) string {
	if protocol == OpenAI {
		return "/v1"
	}
	return ""
}

// buildRoute makes the route r describes. base is the RoundTripper every
// attempt goes out on; fl, if not nil, holds the shared allowances.
func (p *Proxy) buildRoute(r *Route, base http.RoundTripper, fl *fleet.Client) (*route, error) {
	spec := r.Policy
	rt := &route{
		name:      r.Protocol + "/" + r.Model,
		protocol:  r.Protocol,
		prefix:    clientPrefix(r.Protocol),
		targets:   r.Targets,
		ident:     routeIdent(r),
		perTarget: map[string]int64{},
	}
	pol := new(recoil.Policy)
	if spec != nil {
		spec.Build(pol, nil)
	}
	rt.retries = pol.MaxRetries()
	hb := rt.retries
	if hb == 0 {
		hb = -1 // the middleware reads zero as its default
	}
	// The hop protocol in: a recoil service in front of the proxy shares
	// its budget and deadline with the proxy's attempts (never more than
	// the route's own retries: the client's headers can only lower it).
	rt.mw = recoilhttp.NewMiddleware(http.HandlerFunc(p.forward), recoilhttp.MiddlewareConfig{Budget: hb})
	fb := &recoil.Fallback{Cooldown: r.Cooldown}
	for i := range r.Targets {
		t := &r.Targets[i]
		h := http.Header{}
		if t.key != "" {
			switch t.AuthHeader {
			case "authorization":
				h.Set("Authorization", "Bearer "+t.key)
			default:
				h.Set(t.AuthHeader, t.key)
			}
		}
		ep, err := recoilhttp.NewEndpoint(t.BaseURL, h, t.Model)
		if err != nil {
			return nil, err
		}
		tg := recoil.Target{Name: t.Name, MaxContext: t.MaxContext, Value: ep}
		if t.Breaker != nil {
			tg.Breaker = t.Breaker.New()
		}
		fb.Targets = append(fb.Targets, tg)
	}
	rt.base, _ = url.Parse(r.Targets[0].BaseURL)
	pol.Fallback = fb
	rt.fallback = fb
	if r.Allowance != nil && fl != nil {
		a, err := fl.Allowance(fleet.AllowanceConfig{
			Name: "route/" + rt.name, Unit: unitOf(r.Allowance.Unit), Limit: r.Allowance.Limit,
			Window: r.Allowance.Window, Reserved: r.Allowance.Reserved,
		})
		if err != nil {
			return nil, err
		}
		rt.allowance = a
		retries := pol.Budget
		if retries == nil {
			retries = new(budget.Share) // what a nil Budget would have been
		}
		if p.cfg.Fleet != nil && p.cfg.Fleet.RetryBudget {
			b, err := fl.Budget(fleet.BudgetConfig{Name: "route/" + rt.name})
			if err != nil {
				return nil, err
			}
			retries = b
		}
		pol.Budget = a.Guard(fleet.Interactive, retries)
	} else if p.cfg.Fleet != nil && p.cfg.Fleet.RetryBudget && fl != nil {
		b, err := fl.Budget(fleet.BudgetConfig{Name: "route/" + rt.name})
		if err != nil {
			return nil, err
		}
		pol.Budget = b
	}
	if p.metrics != nil {
		p.metrics.instrument(rt.name, pol)
	}
	rt.policy = pol
	idle := time.Duration(0)
	if spec != nil {
		idle = spec.IdleTimeout
	}
	var learn http.RoundTripper = base
	if rt.allowance != nil {
		learn = &fleet.Learner{Base: base, Allowances: []*fleet.Allowance{rt.allowance}}
	}
	rt.transport = &recoilhttp.Transport{
		Base:   learn,
		Policy: pol,
		// Generation calls are POSTs: the proxy retries them under an
		// Idempotency-Key of its own, the same on every attempt, as the
		// SDKs retry them (with theirs).
		IdempotencyKey: true,
		Hop:            true,
		IdleTimeout:    idle,
		Observe:        rt.observe,
	}
	rt.send = rt.transport
	if p.trace != nil {
		rt.send = p.trace(rt.transport)
	}
	return rt, nil
}

func unitOf(s string) fleet.Unit {
	if s == "tokens" {
		return fleet.Tokens
	}
	return fleet.Requests
}

// routeIdent is what identifies a route's configuration across reloads:
// its fields written out in full (pointers followed), the resolved key's
// digest included, so a rotated key rebuilds the route.
func routeIdent(r *Route) string {
	b, _ := json.Marshal(struct {
		R    *Route
		P    *policyspec.Spec
		T    []Target
		Keys [][32]byte
	}{r, r.Policy, r.Targets, keyDigests(r.Targets)})
	return string(b)
}

func keyDigests(ts []Target) [][32]byte {
	out := make([][32]byte, len(ts))
	for i := range ts {
		out[i] = sha256.Sum256([]byte(ts[i].key))
	}
	return out
}

// callKey carries a call's record in the request's context, for the
// Transport's Observe to fill.
type callKey struct{}

// observe records one logical request's summary: into the call's record,
// for the access log line and the answer's headers, and into the
// route's counters, for the page.
func (rt *route) observe(ctx context.Context, s recoilhttp.Summary) {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		c.sum = s
		c.observed = true
	}
	rt.attempts.Add(int64(s.Attempts))
	if s.Attempts > 1 || len(s.Targets) > 1 {
		rt.retried.Add(1)
	}
	if len(s.Targets) == 0 {
		return
	}
	rt.mu.Lock()
	for _, t := range s.Targets {
		rt.perTarget[t.Target] += int64(t.Attempts)
	}
	rt.mu.Unlock()
}
