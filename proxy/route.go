package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
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
	basePath  string // base's path without its trailing slash
	retries   int    // the policy's retries: the budget of a request's account
	hopBudget int    // retries, as hop.Request.AccountBudget reads its own budget
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
	rt := &route{
		name:      r.Protocol + "/" + r.Model,
		protocol:  r.Protocol,
		prefix:    clientPrefix(r.Protocol),
		targets:   r.Targets,
		ident:     routeIdent(r),
		perTarget: map[string]int64{},
	}
	pol := new(recoil.Policy)
	if r.Policy != nil {
		r.Policy.Build(pol, nil)
	}
	// The hop protocol in: a recoil service in front of the proxy shares
	// its budget and deadline with the proxy's attempts (never more than
	// the route's own retries: the client's headers can only lower it).
	rt.retries = pol.MaxRetries()
	rt.hopBudget = rt.retries
	if rt.hopBudget == 0 {
		rt.hopBudget = -1 // AccountBudget reads zero as its default
	}
	fb, err := fallbackOf(r)
	if err != nil {
		return nil, err
	}
	rt.base, _ = url.Parse(r.Targets[0].BaseURL)
	rt.basePath = strings.TrimSuffix(rt.base.Path, "/")
	pol.Fallback = fb
	rt.fallback = fb
	if err := p.shareState(rt, r, pol, fl); err != nil {
		return nil, err
	}
	if p.metrics != nil {
		p.metrics.instrument(rt.name, pol)
	}
	rt.policy = pol
	p.buildTransport(rt, r, base)
	return rt, nil
}

// fallbackOf is the route's Fallback: one target per configured target,
// each an endpoint with the target's credentials and model name.
func fallbackOf(r *Route) (*recoil.Fallback, error) {
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
	return fb, nil
}

// shareState puts the route's allowance, and with the fleet's
// retry_budget its retry budget, in the fleet's shared state: the
// allowance guards the policy's budget, which is the fleet's when shared.
func (p *Proxy) shareState(rt *route, r *Route, pol *recoil.Policy, fl *fleet.Client) error {
	sharedBudget := p.cfg.Fleet != nil && p.cfg.Fleet.RetryBudget && fl != nil
	if r.Allowance == nil || fl == nil {
		if sharedBudget {
			b, err := fl.Budget(fleet.BudgetConfig{Name: "route/" + rt.name})
			if err != nil {
				return err
			}
			pol.Budget = b
		}
		return nil
	}
	a, err := fl.Allowance(fleet.AllowanceConfig{
		Name: "route/" + rt.name, Unit: unitOf(r.Allowance.Unit), Limit: r.Allowance.Limit,
		Window: r.Allowance.Window, Reserved: r.Allowance.Reserved,
	})
	if err != nil {
		return err
	}
	rt.allowance = a
	retries := pol.Budget
	if retries == nil {
		retries = new(budget.Share) // what a nil Budget would have been
	}
	if sharedBudget {
		b, err := fl.Budget(fleet.BudgetConfig{Name: "route/" + rt.name})
		if err != nil {
			return err
		}
		retries = b
	}
	pol.Budget = a.Guard(fleet.Interactive, retries)
	return nil
}

// buildTransport makes the Transport the route's attempts go out
// through, over base, and what Options.Trace makes of it.
func (p *Proxy) buildTransport(rt *route, r *Route, base http.RoundTripper) {
	idle := time.Duration(0)
	if r.Policy != nil {
		idle = r.Policy.IdleTimeout
	}
	var learn http.RoundTripper = base
	if rt.allowance != nil {
		learn = &fleet.Learner{Base: base, Allowances: []*fleet.Allowance{rt.allowance}}
	}
	rt.transport = &recoilhttp.Transport{
		Base:   learn,
		Policy: rt.policy,
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
}

// outPath is the path a request to path goes out on to the route's first
// target: the target's base path in place of the protocol's client-facing
// prefix. It is path itself, with no new string, when the two agree (an
// OpenAI base URL ending in /v1).
func (rt *route) outPath(path string) string {
	rest, ok := strings.CutPrefix(path, rt.prefix)
	if ok && rt.basePath == rt.prefix {
		return path
	}
	return rt.basePath + rest
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
