package audit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// retry reads route r's retry behaviour: the route action's timeout and
// retry_policy (the virtual host's when the route has none), its
// hedge_policy (or the virtual host's), and the budget and circuit
// breaker of the cluster it sends to.
func (f *envoyFile) retry(r *envoyRoute) (Retry, error) {
	d := f.d
	out := Retry{Kind: KindEnvoy, At: d.at(r.route), Attempts: 1, AttemptsAt: d.at(r.route),
		Timeout: envoyDefaultTimeout, TimeoutAt: d.at(r.route), TimeoutDefault: true, Jitter: true,
		JitterNote: "Envoy's back-off is fully jittered: retry N waits a random time below (2^N−1)·base_interval"}
	if r.action == nil {
		out.Timeout, out.TimeoutDefault = 0, false
		out.JitterNote = "a redirect or a direct response: the route calls nothing"
		return out, nil
	}
	ap := strictyaml.Join(r.path, "route")
	if t, err := d.field(r.action, ap, "timeout"); err != nil {
		return out, err
	} else if t != nil {
		if out.Timeout, err = d.protoDuration(t, strictyaml.Join(ap, "timeout")); err != nil {
			return out, err
		}
		out.TimeoutAt, out.TimeoutDefault = d.at(t), false // 0s disables the timeout
	}
	rp, rpp, err := f.inherited(r, "retry_policy")
	if err != nil {
		return out, err
	}
	if rp == nil {
		out.JitterNote = "no retry_policy: Envoy does not retry"
		return out, nil // Envoy retries nothing without a policy
	}
	if err := f.policy(rp, rpp, &out); err != nil {
		return out, err
	}
	if err := f.hedge(r, &out); err != nil {
		return out, err
	}
	return out, f.budget(r, &out)
}

// inherited returns field key of route r's action, or of its virtual host
// when the action has none, and its path.
func (f *envoyFile) inherited(r *envoyRoute, key string) (*yaml.Node, string, error) {
	ap := strictyaml.Join(r.path, "route")
	n, err := f.d.field(r.action, ap, key)
	if err != nil || n != nil {
		return n, strictyaml.Join(ap, key), err
	}
	n, err = f.d.field(r.vh, r.vhPath, key)
	return n, strictyaml.Join(r.vhPath, key), err
}

// policy reads a RetryPolicy: num_retries, retry_on,
// retriable_status_codes, per_try_timeout and the back-offs.
func (f *envoyFile) policy(rp *yaml.Node, rpp string, out *Retry) error {
	d := f.d
	rp, err := d.mapping(rp, rpp)
	if err != nil {
		return err
	}
	out.At, out.AttemptsAt = d.at(rp), d.at(rp)
	retries := envoyDefaultRetries
	if n, err := d.field(rp, rpp, "num_retries"); err != nil {
		return err
	} else if n != nil {
		if retries, err = d.integer(unwrapValue(n), strictyaml.Join(rpp, "num_retries"), 0, envoyMaxRetries); err != nil {
			return err
		}
		out.AttemptsAt = d.at(n)
	}
	out.Attempts = retries + 1
	if ro, err := d.field(rp, rpp, "retry_on"); err != nil {
		return err
	} else if ro != nil {
		s, err := d.str(ro, strictyaml.Join(rpp, "retry_on"))
		if err != nil {
			return err
		}
		out.RetryOn, _ = splitConditions(s, false)
	}
	if err := f.statusCodes(rp, rpp, out); err != nil {
		return err
	}
	if len(out.RetryOn) == 0 {
		// A policy with no condition enables nothing: Envoy retries only
		// what a caller asks for with x-envoy-retry-on.
		out.Attempts = 1
		out.JitterNote = "retry_policy without retry_on: Envoy retries nothing unless a caller sends x-envoy-retry-on"
	}
	if pt, err := d.field(rp, rpp, "per_try_timeout"); err != nil {
		return err
	} else if pt != nil {
		if out.PerTry, err = d.protoDuration(pt, strictyaml.Join(rpp, "per_try_timeout")); err != nil {
			return err
		}
		out.PerTryAt = d.at(pt)
	}
	if err := f.backoff(rp, rpp, out); err != nil {
		return err
	}
	if hp := strictyaml.Lookup(rp, "retry_host_predicate"); hp != nil || strictyaml.Lookup(rp, "retryHostPredicate") != nil {
		out.Notes = append(out.Notes, "retry_host_predicate: retries go to other hosts, which helps when one host fails, not when the service does")
	}
	return f.rateLimited(rp, rpp, out)
}

// statusCodes reads retriable_status_codes.
func (f *envoyFile) statusCodes(rp *yaml.Node, rpp string, out *Retry) error {
	d := f.d
	sc, err := d.field(rp, rpp, "retriable_status_codes")
	if err != nil || sc == nil {
		return err
	}
	p := strictyaml.Join(rpp, "retriable_status_codes")
	list, err := d.list(sc, p)
	if err != nil {
		return err
	}
	for i, c := range list {
		n, err := d.integer(c, strictyaml.Index(p, i), 100, 599)
		if err != nil {
			return err
		}
		out.StatusCodes = append(out.StatusCodes, n)
	}
	return nil
}

// backoff reads retry_back_off and sets the waits' ceilings: retry k
// waits in [0, (2^k−1)·base_interval), capped at max_interval (default
// 10 × base).
func (f *envoyFile) backoff(rp *yaml.Node, rpp string, out *Retry) error {
	d := f.d
	base, maxWait := envoyDefaultBase, time.Duration(0)
	if bo, err := d.field(rp, rpp, "retry_back_off"); err != nil {
		return err
	} else if bo != nil {
		bp := strictyaml.Join(rpp, "retry_back_off")
		if bo, err = d.mapping(bo, bp); err != nil {
			return err
		}
		out.JitterAt = d.at(bo)
		b, err := d.field(bo, bp, "base_interval")
		if err != nil {
			return err
		}
		if b == nil {
			return d.errorf(bo, strictyaml.Join(bp, "base_interval"), "missing: Envoy requires it")
		}
		if base, err = d.protoDuration(b, strictyaml.Join(bp, "base_interval")); err != nil {
			return err
		}
		if base <= 0 {
			return d.errorf(b, strictyaml.Join(bp, "base_interval"), "must be greater than zero")
		}
		if m, err := d.field(bo, bp, "max_interval"); err != nil {
			return err
		} else if m != nil {
			if maxWait, err = d.protoDuration(m, strictyaml.Join(bp, "max_interval")); err != nil {
				return err
			}
			if maxWait < base {
				return d.errorf(m, strictyaml.Join(bp, "max_interval"), "must be at least base_interval (%v)", base)
			}
		}
	}
	if maxWait == 0 {
		maxWait = 10 * base
	}
	for k := 1; k < out.Attempts; k++ {
		c := maxWait
		if k < 40 {
			c = min(time.Duration((int64(1)<<k)-1)*base, maxWait)
		}
		out.Waits = append(out.Waits, c)
	}
	return nil
}

// rateLimited reads rate_limited_retry_back_off: on an answer carrying
// one of its reset_headers (Retry-After, X-RateLimit-Reset; at least one
// is required) Envoy waits what the header says — a wait past max_interval
// (default 300 s) is discarded — plus jitter, a random time up to half as
// long again, in place of its own back-off: the longest wait is 1.5 ×
// max_interval.
func (f *envoyFile) rateLimited(rp *yaml.Node, rpp string, out *Retry) error {
	d := f.d
	rl, err := d.field(rp, rpp, "rate_limited_retry_back_off")
	if err != nil || rl == nil {
		return err
	}
	p := strictyaml.Join(rpp, "rate_limited_retry_back_off")
	if rl, err = d.mapping(rl, p); err != nil {
		return err
	}
	rh, err := d.field(rl, p, "reset_headers")
	if err != nil {
		return err
	}
	if rh == nil {
		return d.errorf(rl, strictyaml.Join(p, "reset_headers"), "missing: Envoy requires at least one (name: Retry-After, format: SECONDS)")
	}
	if hs, err := d.list(rh, strictyaml.Join(p, "reset_headers")); err != nil {
		return err
	} else if len(hs) == 0 {
		return d.errorf(rh, strictyaml.Join(p, "reset_headers"), "empty: Envoy requires at least one (name: Retry-After, format: SECONDS)")
	}
	maxWait := envoyDefaultRateLimitMax
	if m, err := d.field(rl, p, "max_interval"); err != nil {
		return err
	} else if m != nil {
		if maxWait, err = d.protoDuration(m, strictyaml.Join(p, "max_interval")); err != nil {
			return err
		}
		if maxWait <= 0 {
			return d.errorf(m, strictyaml.Join(p, "max_interval"), "must be greater than zero")
		}
	}
	out.ServerWait = maxWait + maxWait/2
	out.Notes = append(out.Notes, fmt.Sprintf("rate_limited_retry_back_off: a server's reset header of up to %v can make a retry wait up to %v (Envoy adds up to half again as jitter)", maxWait, out.ServerWait))
	return nil
}

// hedge reads the hedge_policy of route r (or its virtual host): with
// hedge_on_per_try_timeout, Envoy sends the next attempt when one passes
// its per-try timeout without cancelling it, so attempts overlap — which
// needs a per-try timeout and a retry policy that retries. Envoy does not
// implement initial_requests or additional_request_chance (its API marks
// them so): they are noted, and send no more copies.
func (f *envoyFile) hedge(r *envoyRoute, out *Retry) error {
	d := f.d
	hp, p, err := f.inherited(r, "hedge_policy")
	if err != nil || hp == nil {
		return err
	}
	if hp, err = d.mapping(hp, p); err != nil {
		return err
	}
	if n, err := d.field(hp, p, "initial_requests"); err != nil {
		return err
	} else if n != nil {
		k, err := d.integer(unwrapValue(n), strictyaml.Join(p, "initial_requests"), 1, envoyMaxRetries)
		if err != nil {
			return err
		}
		if k > 1 {
			out.Notes = append(out.Notes, fmt.Sprintf("hedge_policy.initial_requests %d: Envoy does not implement it, and sends one request", k))
		}
	}
	if v, err := d.field(hp, p, "hedge_on_per_try_timeout"); err != nil {
		return err
	} else if v != nil && v.Value == "true" && out.PerTry > 0 && out.Attempts > 1 {
		out.Hedged, out.HedgeDelay = true, out.PerTry
		out.JitterAt = d.at(v)
		out.JitterNote = "hedge_on_per_try_timeout: the next attempt starts when one passes its per-try timeout, beside it"
	}
	return nil
}

// budget reads the retry budget and circuit breaker of the cluster route
// r sends to: thresholds of priority DEFAULT, retry_budget (which, when
// set, replaces max_retries) or max_retries (retries in flight, default 3).
func (f *envoyFile) budget(r *envoyRoute, out *Retry) error {
	d := f.d
	c, ok := f.clusters[r.cluster]
	if !ok {
		where := "the file holds no clusters"
		if len(f.clusters) > 0 {
			where = fmt.Sprintf("the file has no cluster %q", r.cluster)
		}
		out.Budget.Describe = fmt.Sprintf("%s, so no retry_budget; unless the cluster sets one, Envoy's circuit breaker lets %d retries be in flight", where, envoyDefaultMaxRetries)
		return nil
	}
	cp := "cluster " + r.cluster
	out.Budget = Budget{InFlight: envoyDefaultMaxRetries, At: d.at(c), InFlightAt: d.at(c),
		Describe: fmt.Sprintf("cluster %q has no retry_budget; only its circuit breaker's max_retries (%d in flight by default) limits them", r.cluster, envoyDefaultMaxRetries)}
	t, tp, err := f.threshold(c, cp)
	if err != nil || t == nil {
		return err
	}
	if mr, err := d.field(t, tp, "max_retries"); err != nil {
		return err
	} else if mr != nil {
		n, err := d.integer(unwrapValue(mr), strictyaml.Join(tp, "max_retries"), 0, 1<<32-1)
		if err != nil {
			return err
		}
		out.Budget.InFlight, out.Budget.InFlightAt, out.Budget.At = n, d.at(mr), d.at(mr)
		out.Budget.Describe = fmt.Sprintf("cluster %q has no retry_budget; only its circuit breaker's max_retries (%d in flight) limits them", r.cluster, n)
	}
	rb, err := d.field(t, tp, "retry_budget")
	if err != nil || rb == nil {
		return err
	}
	rbp := strictyaml.Join(tp, "retry_budget")
	if rb, err = d.mapping(rb, rbp); err != nil {
		return err
	}
	pct, conc := envoyDefaultBudgetPercent, envoyDefaultMinRetryConc
	if bp, err := d.field(rb, rbp, "budget_percent"); err != nil {
		return err
	} else if bp != nil {
		if pct, err = d.number(unwrapValue(bp), strictyaml.Join(rbp, "budget_percent"), 0, 100); err != nil {
			return err
		}
	}
	if mc, err := d.field(rb, rbp, "min_retry_concurrency"); err != nil {
		return err
	} else if mc != nil {
		if conc, err = d.integer(unwrapValue(mc), strictyaml.Join(rbp, "min_retry_concurrency"), 0, 1<<32-1); err != nil {
			return err
		}
	}
	out.Budget = Budget{Kind: BudgetRatio, RetryRatio: pct / 100, At: d.at(rb),
		Describe: fmt.Sprintf("retry_budget on cluster %q: retries at most %s%% of active requests (at least %d in flight)", r.cluster, trimFloat(pct), conc)}
	return nil
}

// threshold returns cluster c's circuit breaker thresholds for priority
// DEFAULT, or nil.
func (f *envoyFile) threshold(c *yaml.Node, cp string) (*yaml.Node, string, error) {
	d := f.d
	cb, err := d.field(c, cp, "circuit_breakers")
	if err != nil || cb == nil {
		return nil, "", err
	}
	cbp := strictyaml.Join(cp, "circuit_breakers")
	if cb, err = d.mapping(cb, cbp); err != nil {
		return nil, "", err
	}
	th, err := d.field(cb, cbp, "thresholds")
	if err != nil || th == nil {
		return nil, "", err
	}
	list, err := d.list(th, strictyaml.Join(cbp, "thresholds"))
	if err != nil {
		return nil, "", err
	}
	for i, t := range list {
		tp := strictyaml.Index(strictyaml.Join(cbp, "thresholds"), i)
		if t, err = d.mapping(t, tp); err != nil {
			return nil, "", err
		}
		if p, err := d.field(t, tp, "priority"); err != nil {
			return nil, "", err
		} else if p != nil {
			s, err := d.str(p, strictyaml.Join(tp, "priority"))
			if err != nil {
				return nil, "", err
			}
			if !slices.Contains([]string{"DEFAULT", "0"}, strings.ToUpper(s)) {
				continue // the thresholds of high-priority routes
			}
		}
		return t, tp, nil
	}
	return nil, "", nil
}

// unwrapValue returns the value of a protobuf wrapper written out
// ({value: 20.0}), or n itself.
func unwrapValue(n *yaml.Node) *yaml.Node {
	if v := strictyaml.Lookup(n, "value"); n.Kind == yaml.MappingNode && v != nil {
		return v
	}
	return n
}
