package audit

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
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
	envoyDefaultRateLimitMax  = 300 * time.Second     // rate_limited_retry_back_off.max_interval
	envoyMaxRetries           = 1000                  // no configuration means more; it keeps products finite
	maxDepth                  = 100                   // nesting the Envoy walk follows
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
	route   *yaml.Node // the route's mapping
	action  *yaml.Node // its "route" action, or nil
	vh      *yaml.Node // the virtual host
	vhPath  string
	path    string
	cluster string
}

// envoyFile is what an Envoy file holds: its routes and its clusters by
// name.
type envoyFile struct {
	d        *doc
	routes   []envoyRoute
	clusters map[string]*yaml.Node
}

// parseEnvoy reads the retry behaviour of the route of an Envoy
// configuration that sel chooses (see choose) for a call to callee to.
func parseEnvoy(file string, data []byte, sel selector, to string) (Retry, error) {
	c, err := ReadConfig(KindEnvoy, file, data)
	if err != nil {
		return Retry{}, err
	}
	r, err := choose(file, c.Routes, sel, to)
	if err != nil {
		return Retry{}, err
	}
	return r.Retry, r.noCall
}

// envoyRoutes reads every route of an Envoy file in any shape Envoy's
// loaders take: a RouteConfiguration (virtual_hosts at the top), a list
// of them, a bootstrap (static_resources), an xDS file (resources), an
// admin config dump (configs), a listener — YAML or JSON, several
// documents, field names in snake_case or lowerCamelCase, a mapping where
// a list of one is meant. The clusters found beside the routes give their
// retry budgets and circuit breakers.
func envoyRoutes(file string, data []byte) ([]Route, error) {
	roots, err := readDocs(file, data)
	if err != nil {
		return nil, err
	}
	f := &envoyFile{d: &doc{file: file, names: protoNames}, clusters: map[string]*yaml.Node{}}
	for _, root := range roots {
		if err := f.walk(root, "", 0, root.Kind == yaml.SequenceNode); err != nil {
			return nil, err
		}
	}
	if len(f.routes) == 0 {
		return nil, f.d.errorf(roots[0], "", "no routes: want a RouteConfiguration (virtual_hosts) or a bootstrap whose listeners hold a route_config")
	}
	out := make([]Route, 0, len(f.routes))
	for i := range f.routes {
		r, err := f.route(&f.routes[i])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// walk finds the route configurations and clusters under n: a mapping
// with virtual_hosts is a RouteConfiguration; the items of a clusters
// list, a config dump's cluster, and (top) the named items of a top-level
// list that are not route configurations are clusters.
func (f *envoyFile) walk(n *yaml.Node, path string, depth int, top bool) error {
	d := f.d
	n, err := d.deref(n, path)
	if err != nil || n == nil || depth > maxDepth {
		return err
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if err := f.walk(item, strictyaml.Index(path, i), depth+1, top); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if vh, err := d.field(n, path, "virtual_hosts"); err != nil || vh != nil {
			if err != nil {
				return err
			}
			return f.routeConfig(n, path)
		}
		if top && depth == 1 {
			f.addCluster(n)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := strictyaml.Join(path, k.Value)
			switch {
			case d.match(k.Value, "clusters"):
				items, err := d.list(v, p)
				if err != nil {
					return err
				}
				for _, c := range items {
					f.addCluster(c)
				}
			case d.match(k.Value, "cluster") && v.Kind == yaml.MappingNode:
				f.addCluster(v)
			default:
				if err := f.walk(v, p, depth+1, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// addCluster records a cluster by its name.
func (f *envoyFile) addCluster(c *yaml.Node) {
	if c == nil || c.Kind != yaml.MappingNode {
		return
	}
	if n := strictyaml.Lookup(c, "name"); n != nil && n.Kind == yaml.ScalarNode && n.Value != "" {
		if _, seen := f.clusters[n.Value]; !seen {
			f.clusters[n.Value] = c
		}
	}
}

// routeConfig adds the routes of RouteConfiguration rc.
func (f *envoyFile) routeConfig(rc *yaml.Node, path string) error {
	d := f.d
	vhs, _ := d.field(rc, path, "virtual_hosts")
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
			if err := f.action(&er); err != nil {
				return err
			}
			f.routes = append(f.routes, er)
		}
	}
	return nil
}

// action reads route r's route action and the cluster it sends to.
func (f *envoyFile) action(r *envoyRoute) error {
	d := f.d
	a, err := d.field(r.route, r.path, "route")
	if err != nil || a == nil {
		return err
	}
	ap := strictyaml.Join(r.path, "route")
	if r.action, err = d.mapping(a, ap); err != nil {
		return err
	}
	if c, err := d.field(r.action, ap, "cluster"); err != nil {
		return err
	} else if c != nil {
		r.cluster, err = d.str(c, strictyaml.Join(ap, "cluster"))
		return err
	}
	// weighted_clusters: the first cluster stands for the route.
	wc, err := d.field(r.action, ap, "weighted_clusters")
	if err != nil || wc == nil || wc.Kind != yaml.MappingNode {
		return err
	}
	if cs := strictyaml.Lookup(wc, "clusters"); cs != nil && cs.Kind == yaml.SequenceNode && len(cs.Content) > 0 {
		if n := strictyaml.Lookup(cs.Content[0], "name"); n != nil && n.Kind == yaml.ScalarNode {
			r.cluster = n.Value
		}
	}
	return nil
}

// route interprets envoyRoute r as a Route.
func (f *envoyFile) route(r *envoyRoute) (Route, error) {
	out := Route{Path: r.path, Match: envoyMatch(r.route)}
	if n := strictyaml.Lookup(r.route, "name"); n != nil {
		name, err := f.d.str(n, strictyaml.Join(r.path, "name"))
		if err != nil {
			return out, err
		}
		out.Name = name
	}
	if vh := r.vh; vh != nil {
		if ds := strictyaml.Lookup(vh, "domains"); ds != nil && ds.Kind == yaml.SequenceNode {
			for _, dn := range ds.Content {
				out.Hosts = append(out.Hosts, dn.Value)
			}
		}
	}
	if r.cluster != "" {
		out.Destinations = []string{r.cluster}
	}
	if r.action == nil {
		out.noCall = f.d.errorf(r.route, r.path, "the route has no route action (a redirect or a direct response calls nothing)")
	}
	var err error
	out.Retry, err = f.retry(r)
	return out, err
}

// envoyMatch describes what a route matches: "prefix /api".
func envoyMatch(route *yaml.Node) string {
	m := strictyaml.Lookup(route, "match")
	if m == nil || m.Kind != yaml.MappingNode {
		return ""
	}
	for _, k := range []string{"prefix", "path", "path_separated_prefix", "pathSeparatedPrefix"} {
		if v := strictyaml.Lookup(m, k); v != nil && v.Kind == yaml.ScalarNode {
			return strings.TrimSuffix(lowerCamel(k), "SeparatedPrefix") + " " + v.Value
		}
	}
	for _, k := range []string{"safe_regex", "safeRegex"} {
		if v := strictyaml.Lookup(m, k); v != nil {
			if re := strictyaml.Lookup(v, "regex"); re != nil && re.Kind == yaml.ScalarNode {
				return "regex " + re.Value
			}
		}
	}
	return ""
}
