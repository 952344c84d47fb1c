package audit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/internal/strictyaml"
)

// Envoy's defaults (Envoy's router filter documentation, x-envoy-max-retries
// and the route's RetryPolicy; the cluster's CircuitBreakers).
const (
	envoyDefaultRetries       = 1                     // num_retries when a retry_policy is present
	envoyDefaultTimeout       = 15 * time.Second      // a route's timeout, retries included
	envoyDefaultBase          = 25 * time.Millisecond // retry_back_off.base_interval
	envoyDefaultBudgetPercent = 20.0                  // retry_budget.budget_percent
	envoyDefaultMinRetryConc  = 3                     // retry_budget.min_retry_concurrency
	envoyDefaultMaxRetries    = 3                     // circuit breaker max_retries
	envoyMaxRetries           = 1000                  // no configuration means more; it keeps products finite
)

// selector is how the mesh names one part of a configuration file: a
// route, a method. Errors about the choice are the mesh's, on its line.
type selector struct {
	name  string // as written; may be empty
	field string // the mesh field's path, e.g. "edges[0].route"
	at    Source // its line in the mesh
}

func (s selector) errorf(format string, args ...any) *Error {
	return &Error{File: s.at.File, Line: s.at.Line, Field: s.field, Err: fmt.Errorf(format, args...)}
}

// envoyRoute is one route of the configuration, with its virtual host.
type envoyRoute struct {
	name    string
	route   *yaml.Node // the route's mapping
	action  *yaml.Node // its "route" action, or nil
	vh      *yaml.Node // the virtual host
	vhPath  string
	path    string
	cluster string
}

// parseEnvoy reads the retry behaviour of one route of an Envoy route
// configuration — a RouteConfiguration (virtual_hosts at the top) or a
// bootstrap whose listeners' HTTP connection managers hold route_config
// and whose static_resources hold the clusters — chosen by sel (a route's
// name; it may be left out when the file has one route). From the route it
// reads timeout and retry_policy (the virtual host's when the route has
// none): num_retries, retry_on, per_try_timeout, retry_back_off; from the
// cluster the route sends to, circuit_breakers.thresholds' retry_budget
// and max_retries.
func parseEnvoy(file string, data []byte, sel selector) (Retry, error) {
	root, err := readYAML(file, data)
	if err != nil {
		return Retry{}, err
	}
	d := &doc{file: file}
	root, err = d.mapping(root, "")
	if err != nil {
		return Retry{}, err
	}
	routes, clusters, err := envoyRoutes(d, root)
	if err != nil {
		return Retry{}, err
	}
	var r *envoyRoute
	var names []string
	for i := range routes {
		names = append(names, routes[i].name)
		if sel.name != "" && routes[i].name == sel.name {
			if r != nil {
				return Retry{}, d.errorf(routes[i].route, routes[i].path, "a second route named %q (the first is on line %d)", sel.name, r.route.Line)
			}
			r = &routes[i]
		}
	}
	switch {
	case len(routes) == 0:
		return Retry{}, d.errorf(root, "", "no routes: want a RouteConfiguration (virtual_hosts) or a bootstrap whose listeners hold a route_config")
	case sel.name == "" && len(routes) > 1:
		return Retry{}, sel.errorf("%s has %d routes (%s): name one with route", file, len(routes), quoteList(names))
	case sel.name == "":
		r = &routes[0]
	case r == nil:
		return Retry{}, sel.errorf("%s has no route named %q (it has %s)", file, sel.name, quoteList(names))
	}
	return envoyRetry(d, r, clusters)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		if n == "" {
			n = "an unnamed route"
		} else {
			n = fmt.Sprintf("%q", n)
		}
		q[i] = n
	}
	return strings.Join(q, ", ")
}

// envoyRoutes finds every route of a RouteConfiguration or a bootstrap,
// and the bootstrap's clusters by name.
func envoyRoutes(d *doc, root *yaml.Node) ([]envoyRoute, map[string]*yaml.Node, error) {
	var routes []envoyRoute
	clusters := map[string]*yaml.Node{}
	addConfig := func(rc *yaml.Node, path string) error {
		rc, err := d.mapping(rc, path)
		if err != nil {
			return err
		}
		vhs, err := d.field(rc, path, "virtual_hosts")
		if err != nil || vhs == nil {
			return err
		}
		vpath := strictyaml.Join(path, "virtual_hosts")
		list, err := d.list(vhs, vpath)
		if err != nil {
			return err
		}
		for i, vh := range list {
			vhp := strictyaml.Index(vpath, i)
			if vh, err = d.mapping(vh, vhp); err != nil {
				return err
			}
			rs, err := d.field(vh, vhp, "routes")
			if err != nil {
				return err
			}
			if rs == nil {
				continue
			}
			rlist, err := d.list(rs, strictyaml.Join(vhp, "routes"))
			if err != nil {
				return err
			}
			for j, rt := range rlist {
				rp := strictyaml.Index(strictyaml.Join(vhp, "routes"), j)
				if rt, err = d.mapping(rt, rp); err != nil {
					return err
				}
				er := envoyRoute{route: rt, vh: vh, vhPath: vhp, path: rp}
				if n, err := d.field(rt, rp, "name"); err != nil {
					return err
				} else if n != nil {
					if er.name, err = d.str(n, strictyaml.Join(rp, "name")); err != nil {
						return err
					}
				}
				if er.action, err = d.field(rt, rp, "route"); err != nil {
					return err
				}
				if er.action != nil {
					ap := strictyaml.Join(rp, "route")
					if er.action, err = d.mapping(er.action, ap); err != nil {
						return err
					}
					if c, err := d.field(er.action, ap, "cluster"); err != nil {
						return err
					} else if c != nil {
						if er.cluster, err = d.str(c, strictyaml.Join(ap, "cluster")); err != nil {
							return err
						}
					}
				}
				routes = append(routes, er)
			}
		}
		return nil
	}
	if vh, err := d.field(root, "", "virtual_hosts"); err != nil {
		return nil, nil, err
	} else if vh != nil {
		return routes, clusters, addConfig(root, "")
	}
	sr, err := d.field(root, "", "static_resources")
	if err != nil || sr == nil {
		return nil, nil, err
	}
	if sr, err = d.mapping(sr, "static_resources"); err != nil {
		return nil, nil, err
	}
	if cs, err := d.field(sr, "static_resources", "clusters"); err != nil {
		return nil, nil, err
	} else if cs != nil {
		list, err := d.list(cs, "static_resources.clusters")
		if err != nil {
			return nil, nil, err
		}
		for i, c := range list {
			cp := strictyaml.Index("static_resources.clusters", i)
			if c, err = d.mapping(c, cp); err != nil {
				return nil, nil, err
			}
			n, err := d.field(c, cp, "name")
			if err != nil {
				return nil, nil, err
			}
			if n != nil {
				name, err := d.str(n, strictyaml.Join(cp, "name"))
				if err != nil {
					return nil, nil, err
				}
				clusters[name] = c
			}
		}
	}
	ls, err := d.field(sr, "static_resources", "listeners")
	if err != nil || ls == nil {
		return routes, clusters, err
	}
	list, err := d.list(ls, "static_resources.listeners")
	if err != nil {
		return nil, nil, err
	}
	// Walk listeners[].filter_chains[].filters[].typed_config.route_config.
	for i, l := range list {
		lp := strictyaml.Index("static_resources.listeners", i)
		if l, err = d.mapping(l, lp); err != nil {
			return nil, nil, err
		}
		fcs, err := d.field(l, lp, "filter_chains")
		if err != nil {
			return nil, nil, err
		}
		if fcs == nil {
			continue
		}
		fcl, err := d.list(fcs, strictyaml.Join(lp, "filter_chains"))
		if err != nil {
			return nil, nil, err
		}
		for j, fc := range fcl {
			fcp := strictyaml.Index(strictyaml.Join(lp, "filter_chains"), j)
			if fc, err = d.mapping(fc, fcp); err != nil {
				return nil, nil, err
			}
			fs, err := d.field(fc, fcp, "filters")
			if err != nil {
				return nil, nil, err
			}
			if fs == nil {
				continue
			}
			fl, err := d.list(fs, strictyaml.Join(fcp, "filters"))
			if err != nil {
				return nil, nil, err
			}
			for k, f := range fl {
				fp := strictyaml.Index(strictyaml.Join(fcp, "filters"), k)
				if f, err = d.mapping(f, fp); err != nil {
					return nil, nil, err
				}
				tc, err := d.field(f, fp, "typed_config")
				if err != nil {
					return nil, nil, err
				}
				if tc == nil {
					continue
				}
				tcp := strictyaml.Join(fp, "typed_config")
				if tc, err = d.mapping(tc, tcp); err != nil {
					return nil, nil, err
				}
				rc, err := d.field(tc, tcp, "route_config")
				if err != nil {
					return nil, nil, err
				}
				if rc != nil {
					if err := addConfig(rc, strictyaml.Join(tcp, "route_config")); err != nil {
						return nil, nil, err
					}
				}
			}
		}
	}
	return routes, clusters, nil
}

// envoyRetry reads route r's retry behaviour.
func envoyRetry(d *doc, r *envoyRoute, clusters map[string]*yaml.Node) (Retry, error) {
	out := Retry{Kind: KindEnvoy, At: d.at(r.route), Attempts: 1, AttemptsAt: d.at(r.route),
		Timeout: envoyDefaultTimeout, TimeoutAt: d.at(r.route), TimeoutDefault: true, Jitter: true,
		JitterNote: "Envoy's back-off is fully jittered: retry N waits a random time below (2^N−1)·base_interval"}
	if r.action == nil {
		return out, d.errorf(r.route, r.path, "the route has no route action (a redirect or a direct response calls nothing)")
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
	rp, err := d.field(r.action, ap, "retry_policy")
	if err != nil {
		return out, err
	}
	rpp := strictyaml.Join(ap, "retry_policy")
	if rp == nil {
		if rp, err = d.field(r.vh, r.vhPath, "retry_policy"); err != nil {
			return out, err
		}
		rpp = strictyaml.Join(r.vhPath, "retry_policy")
	}
	if rp == nil {
		out.JitterNote = "no retry_policy: Envoy does not retry"
		return out, nil // Envoy retries nothing without a policy
	}
	if rp, err = d.mapping(rp, rpp); err != nil {
		return out, err
	}
	out.At = d.at(rp)
	out.AttemptsAt = d.at(rp)
	retries := envoyDefaultRetries
	if n, err := d.field(rp, rpp, "num_retries"); err != nil {
		return out, err
	} else if n != nil {
		np := strictyaml.Join(rpp, "num_retries")
		if n.Kind == yaml.MappingNode { // a UInt32Value written out
			if n, err = d.field(n, np, "value"); err != nil {
				return out, err
			}
			np = strictyaml.Join(np, "value")
			if n == nil {
				return out, d.errorf(rp, np, "missing")
			}
		}
		if retries, err = d.integer(n, np, 0, envoyMaxRetries); err != nil {
			return out, err
		}
		out.AttemptsAt = d.at(n)
	}
	out.Attempts = retries + 1
	if ro, err := d.field(rp, rpp, "retry_on"); err != nil {
		return out, err
	} else if ro != nil {
		s, err := d.str(ro, strictyaml.Join(rpp, "retry_on"))
		if err != nil {
			return out, err
		}
		for _, c := range strings.Split(s, ",") {
			if c = strings.TrimSpace(c); c != "" {
				out.RetryOn = append(out.RetryOn, c)
			}
		}
	}
	if len(out.RetryOn) == 0 {
		// A policy with no condition enables nothing: Envoy retries only
		// what a caller asks for with x-envoy-retry-on.
		out.Attempts = 1
		out.JitterNote = "retry_policy without retry_on: Envoy retries nothing unless a caller sends x-envoy-retry-on"
	}
	if pt, err := d.field(rp, rpp, "per_try_timeout"); err != nil {
		return out, err
	} else if pt != nil {
		if out.PerTry, err = d.protoDuration(pt, strictyaml.Join(rpp, "per_try_timeout")); err != nil {
			return out, err
		}
		out.PerTryAt = d.at(pt)
	}
	base, maxWait := envoyDefaultBase, time.Duration(0)
	if bo, err := d.field(rp, rpp, "retry_back_off"); err != nil {
		return out, err
	} else if bo != nil {
		bp := strictyaml.Join(rpp, "retry_back_off")
		if bo, err = d.mapping(bo, bp); err != nil {
			return out, err
		}
		out.JitterAt = d.at(bo)
		b, err := d.field(bo, bp, "base_interval")
		if err != nil {
			return out, err
		}
		if b == nil {
			return out, d.errorf(bo, strictyaml.Join(bp, "base_interval"), "missing: Envoy requires it")
		}
		if base, err = d.protoDuration(b, strictyaml.Join(bp, "base_interval")); err != nil {
			return out, err
		}
		if base <= 0 {
			return out, d.errorf(b, strictyaml.Join(bp, "base_interval"), "must be greater than zero")
		}
		if m, err := d.field(bo, bp, "max_interval"); err != nil {
			return out, err
		} else if m != nil {
			if maxWait, err = d.protoDuration(m, strictyaml.Join(bp, "max_interval")); err != nil {
				return out, err
			}
			if maxWait < base {
				return out, d.errorf(m, strictyaml.Join(bp, "max_interval"), "must be at least base_interval (%v)", base)
			}
		}
	}
	if maxWait == 0 {
		maxWait = 10 * base
	}
	for k := 1; k < out.Attempts; k++ {
		// Retry k waits in [0, (2^k−1)·base), capped at max_interval.
		c := maxWait
		if k < 40 {
			c = min(time.Duration((int64(1)<<k)-1)*base, maxWait)
		}
		out.Waits = append(out.Waits, c)
	}
	return out, envoyBudget(d, r, clusters, &out)
}

// envoyBudget reads the retry budget of the cluster route r sends to.
func envoyBudget(d *doc, r *envoyRoute, clusters map[string]*yaml.Node, out *Retry) error {
	c, ok := clusters[r.cluster]
	if !ok {
		where := "the file holds no clusters"
		if len(clusters) > 0 {
			where = fmt.Sprintf("the file has no cluster %q", r.cluster)
		}
		out.Budget.Describe = fmt.Sprintf("%s, so no retry_budget; Envoy's circuit breaker allows %d retries in flight by default", where, envoyDefaultMaxRetries)
		return nil
	}
	cp := "cluster " + r.cluster
	out.Budget.Describe = fmt.Sprintf("cluster %q has no retry_budget; only its circuit breaker's max_retries (%d in flight by default) limits them", r.cluster, envoyDefaultMaxRetries)
	out.Budget.At = d.at(c)
	cb, err := d.field(c, cp, "circuit_breakers")
	if err != nil || cb == nil {
		return err
	}
	cbp := strictyaml.Join(cp, "circuit_breakers")
	if cb, err = d.mapping(cb, cbp); err != nil {
		return err
	}
	th, err := d.field(cb, cbp, "thresholds")
	if err != nil || th == nil {
		return err
	}
	list, err := d.list(th, strictyaml.Join(cbp, "thresholds"))
	if err != nil {
		return err
	}
	for i, t := range list {
		tp := strictyaml.Index(strictyaml.Join(cbp, "thresholds"), i)
		if t, err = d.mapping(t, tp); err != nil {
			return err
		}
		if p, err := d.field(t, tp, "priority"); err != nil {
			return err
		} else if p != nil {
			s, err := d.str(p, strictyaml.Join(tp, "priority"))
			if err != nil {
				return err
			}
			if !slices.Contains([]string{"DEFAULT", "0"}, s) {
				continue // the budget of high-priority routes
			}
		}
		if mr, err := d.field(t, tp, "max_retries"); err != nil {
			return err
		} else if mr != nil {
			n, err := d.integer(unwrapValue(mr), strictyaml.Join(tp, "max_retries"), 0, 1<<32-1)
			if err != nil {
				return err
			}
			out.Budget.Describe = fmt.Sprintf("cluster %q has no retry_budget; only its circuit breaker's max_retries (%d in flight) limits them", r.cluster, n)
			out.Budget.At = d.at(mr)
		}
		rb, err := d.field(t, tp, "retry_budget")
		if err != nil {
			return err
		}
		if rb == nil {
			continue
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
	return nil
}

// unwrapValue returns the value of a protobuf wrapper written out
// ({value: 20.0}), or n itself.
func unwrapValue(n *yaml.Node) *yaml.Node {
	if v := strictyaml.Lookup(n, "value"); n.Kind == yaml.MappingNode && v != nil {
		return v
	}
	return n
}
