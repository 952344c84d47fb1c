package audit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// SidecarDefault is what an Istio sidecar does on an http route that no
// VirtualService gives retries: Istio's default retry policy (pilot's
// retry.DefaultPolicy). The zero SidecarDefault is DefaultSidecar's.
type SidecarDefault struct {
	// Retries are the retries after the first attempt.
	Retries int `json:"retries"`
	// RetryOn are the retry conditions, in Envoy's words; a number is a
	// status code retried (Istio's retryOn spelling).
	RetryOn string `json:"retry_on"`
}

// DefaultSidecar returns Istio's default since 1.24: two retries on
// connect-failure, refused-stream, unavailable, cancelled and
// retriable-status-codes with no status code listed. Istio before 1.24
// (or EXCLUDE_UNSAFE_503_FROM_DEFAULT_RETRY=false) also retried 503:
// SidecarDefault{Retries: 2, RetryOn: DefaultSidecar().RetryOn + ",503"}.
func DefaultSidecar() SidecarDefault {
	return SidecarDefault{Retries: 2, RetryOn: "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"}
}

func (s SidecarDefault) orDefault() SidecarDefault {
	if s.Retries == 0 && s.RetryOn == "" {
		return DefaultSidecar()
	}
	return s
}

// parseIstio reads the retry behaviour of the http route of an Istio file
// that sel chooses (see choose) for a call to to, with the sidecar's
// default for a route without retries, and the DestinationRules of the
// same file for its host.
func parseIstio(file string, data []byte, sel selector, to string, sd SidecarDefault) (Retry, error) {
	c, err := ReadConfig(KindIstio, file, data)
	if err != nil {
		return Retry{}, err
	}
	r, err := choose(file, c.Routes, sel, to)
	if err != nil {
		return Retry{}, err
	}
	out := r.Retry
	out.applySidecarDefault(sd)
	applyRules(&out, r, c.Rules)
	return out, nil
}

// istioConfig reads an Istio file's VirtualServices' routes and its
// DestinationRules: one document or many, a List, other kinds passed
// over. A document with no kind is read as a VirtualService.
func istioConfig(file string, data []byte) ([]Route, []DestinationRule, error) {
	roots, err := readDocs(file, data)
	if err != nil {
		return nil, nil, err
	}
	d := &doc{file: file, names: exactNames}
	var routes []Route
	var rules []DestinationRule
	var kinds []string
	for _, root := range roots {
		kind, name := resourceKind(root)
		switch kind {
		case "VirtualService", "":
			rs, err := istioRoutes(d, root, name, kind == "")
			if err != nil {
				return nil, nil, err
			}
			routes = append(routes, rs...)
		case "DestinationRule":
			dr, err := istioRule(d, root, name)
			if err != nil {
				return nil, nil, err
			}
			rules = append(rules, dr)
		default:
			kinds = append(kinds, kind)
		}
	}
	if len(routes) == 0 && len(rules) == 0 {
		return nil, nil, d.errorf(roots[0], "kind", "no VirtualService or DestinationRule in the file (it has %s)", strings.Join(kinds, ", "))
	}
	for i := range routes {
		applyRules(&routes[i].Retry, &routes[i], rules)
	}
	return routes, rules, nil
}

// istioRoutes reads the http (and tcp, tls) routes of VirtualService vs.
func istioRoutes(d *doc, vs *yaml.Node, name string, bare bool) ([]Route, error) {
	vs, err := d.mapping(vs, "")
	if err != nil {
		return nil, err
	}
	spec, err := d.field(vs, "", "spec")
	if err != nil {
		return nil, err
	}
	if spec == nil {
		return nil, d.errorf(vs, "spec", "missing: a VirtualService's routes are in spec.http")
	}
	if spec, err = d.mapping(spec, "spec"); err != nil {
		return nil, err
	}
	owner := ""
	if !bare {
		owner = "VirtualService/" + name
	}
	hosts, gateways := stringList(spec, "hosts"), stringList(spec, "gateways")
	var out []Route
	for _, proto := range []string{"http", "tcp", "tls"} {
		h, err := d.field(spec, "spec", proto)
		if err != nil {
			return nil, err
		}
		if h == nil {
			continue
		}
		list, err := d.list(h, "spec."+proto)
		if err != nil {
			return nil, err
		}
		for i, r := range list {
			p := strictyaml.Index("spec."+proto, i)
			if r, err = d.mapping(r, p); err != nil {
				return nil, err
			}
			rt := Route{Path: p, Owner: owner, Hosts: hosts, Gateways: gateways, Match: istioMatch(r)}
			rt.dests = istioDests(r)
			for _, dst := range rt.dests {
				rt.Destinations = append(rt.Destinations, dst.host)
			}
			if n, err := d.field(r, p, "name"); err != nil {
				return nil, err
			} else if n != nil {
				if rt.Name, err = d.str(n, strictyaml.Join(p, "name")); err != nil {
					return nil, err
				}
			}
			if proto == "http" {
				rt.Retry, err = istioRetry(d, r, p)
			} else {
				rt.Retry = Retry{Kind: KindIstio, At: d.at(r), Attempts: 1, Jitter: true, JitterNote: "a " + proto + " route: Envoy's TCP proxy does not retry"}
			}
			if err != nil {
				return nil, err
			}
			out = append(out, rt)
		}
	}
	if len(out) == 0 {
		return nil, d.errorf(spec, "spec.http", "missing: no http routes")
	}
	return out, nil
}

// stringList returns the strings of list key of mapping m.
func stringList(m *yaml.Node, key string) []string {
	var out []string
	if l := strictyaml.Lookup(m, key); l != nil && l.Kind == yaml.SequenceNode {
		for _, v := range l.Content {
			if v.Kind == yaml.ScalarNode {
				out = append(out, v.Value)
			}
		}
	}
	return out
}

// istioDests returns what an http route sends to: each destination's
// host, subset and port number.
func istioDests(r *yaml.Node) []istioDest {
	var out []istioDest
	if rs := strictyaml.Lookup(r, "route"); rs != nil && rs.Kind == yaml.SequenceNode {
		for _, w := range rs.Content {
			dst := strictyaml.Lookup(w, "destination")
			h := strictyaml.Lookup(dst, "host")
			if dst == nil || h == nil || h.Kind != yaml.ScalarNode {
				continue
			}
			d := istioDest{host: h.Value}
			if sub := strictyaml.Lookup(dst, "subset"); sub != nil && sub.Kind == yaml.ScalarNode {
				d.subset = sub.Value
			}
			if n := strictyaml.Lookup(strictyaml.Lookup(dst, "port"), "number"); n != nil && n.Kind == yaml.ScalarNode {
				d.port, _ = strconv.Atoi(n.Value)
			}
			out = append(out, d)
		}
	}
	return out
}

// istioMatch describes an http route's first match: "uri prefix /api",
// "headers end-user", or "default" for a route that matches everything.
func istioMatch(r *yaml.Node) string {
	ms := strictyaml.Lookup(r, "match")
	if ms == nil || ms.Kind != yaml.SequenceNode || len(ms.Content) == 0 {
		return "default"
	}
	m := ms.Content[0]
	if u := strictyaml.Lookup(m, "uri"); u != nil && u.Kind == yaml.MappingNode && len(u.Content) == 2 {
		return "uri " + u.Content[0].Value + " " + u.Content[1].Value
	}
	if h := strictyaml.Lookup(m, "headers"); h != nil && h.Kind == yaml.MappingNode && len(h.Content) >= 2 {
		return "headers " + h.Content[0].Value
	}
	return ""
}

// istioRetry reads the retry behaviour of http route r at path: timeout
// and retries (attempts — the retries after the first —, perTryTimeout,
// retryOn). A route without retries gets the sidecar's default.
func istioRetry(d *doc, r *yaml.Node, path string) (Retry, error) {
	out := Retry{Kind: KindIstio, At: d.at(r), Jitter: true,
		JitterNote: "Istio sets no back-off: Envoy's default, jittered, from 25ms",
		Budget:     Budget{Describe: "a VirtualService has no retry budget", At: d.at(r)}}
	if t, err := d.field(r, path, "timeout"); err != nil {
		return out, err
	} else if t != nil {
		if out.Timeout, err = d.goDuration(t, strictyaml.Join(path, "timeout")); err != nil {
			return out, err
		}
		out.TimeoutAt = d.at(t)
	}
	rt, err := d.field(r, path, "retries")
	if err != nil {
		return out, err
	}
	if rt == nil {
		out.IstioDefault = true
		out.applySidecarDefault(SidecarDefault{})
		return out, nil
	}
	return out, istioRetries(d, rt, strictyaml.Join(path, "retries"), &out)
}

// istioRetries reads an http route's retries.
func istioRetries(d *doc, rt *yaml.Node, rp string, out *Retry) error {
	rt, err := d.mapping(rt, rp)
	if err != nil {
		return err
	}
	out.At = d.at(rt)
	a, err := d.field(rt, rp, "attempts")
	if err != nil {
		return err
	}
	if a == nil {
		return d.errorf(rt, strictyaml.Join(rp, "attempts"), "missing: Istio requires it in retries")
	}
	n, err := d.integer(a, strictyaml.Join(rp, "attempts"), 0, envoyMaxRetries)
	if err != nil {
		return err
	}
	out.Attempts, out.AttemptsAt = n+1, d.at(a)
	out.RetryOn, _ = splitConditions(DefaultSidecar().RetryOn, true)
	if pt, err := d.field(rt, rp, "perTryTimeout"); err != nil {
		return err
	} else if pt != nil {
		if out.PerTry, err = d.goDuration(pt, strictyaml.Join(rp, "perTryTimeout")); err != nil {
			return err
		}
		if out.PerTry > 0 && out.PerTry < time.Millisecond {
			return d.errorf(pt, strictyaml.Join(rp, "perTryTimeout"), "must be at least 1ms")
		}
		out.PerTryAt = d.at(pt)
	}
	if ro, err := d.field(rt, rp, "retryOn"); err != nil {
		return err
	} else if ro != nil {
		s, err := d.str(ro, strictyaml.Join(rp, "retryOn"))
		if err != nil {
			return err
		}
		out.RetryOn, out.StatusCodes = splitConditions(s, true)
	}
	out.setWaits()
	return nil
}

// applySidecarDefault gives a route that Istio gives the default retry
// policy (IstioDefault) the sidecar default sd.
func (r *Retry) applySidecarDefault(sd SidecarDefault) {
	if !r.IstioDefault {
		return
	}
	sd = sd.orDefault()
	r.Attempts, r.AttemptsAt = sd.Retries+1, Source{}
	r.RetryOn, r.StatusCodes = splitConditions(sd.RetryOn, true)
	r.JitterNote = "Istio sets no back-off: Envoy's default, jittered, from 25ms; no retries field: the sidecar's default of " + fmt.Sprint(sd.Retries) + " retries"
	r.setWaits()
	if r.Protocol != "" {
		r.setProtocol(r.Protocol)
	}
}

// setWaits sets an Istio route's waits, Envoy's default back-off.
func (r *Retry) setWaits() {
	r.Waits = nil
	for k := 1; k < r.Attempts; k++ {
		c := 10 * envoyDefaultBase
		if k < 4 {
			c = min(envoyDefaultBase*((1<<k)-1), c)
		}
		r.Waits = append(r.Waits, c)
	}
}
