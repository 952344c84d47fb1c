package audit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Route is one part of a configuration file an edge can choose — an
// Envoy route, an Istio http route, a gRPC methodConfig — with what it
// names of the call graph and the retry behaviour it gives a call.
type Route struct {
	// Name is the route's own name: an Envoy or Istio route's name, a
	// gRPC methodConfig's first service/method; empty when it has none.
	Name string `json:"name,omitempty"`
	// Path is where the route is in its file: "virtual_hosts[0].routes[1]",
	// "spec.http[1]", "methodConfig[2]".
	Path string `json:"path"`
	// Match says what requests it takes, for a route with no name
	// ("prefix /service/1").
	Match string `json:"match,omitempty"`
	// Owner is the Kubernetes resource holding it, "VirtualService/name";
	// empty for a file that is not one.
	Owner string `json:"owner,omitempty"`
	// Hosts are the hosts it serves (a VirtualService's hosts, an Envoy
	// virtual host's domains); Gateways the Istio gateways it is bound to
	// ("mesh" for the sidecars).
	Hosts    []string `json:"hosts,omitempty"`
	Gateways []string `json:"gateways,omitempty"`
	// Destinations are what it sends to: Istio destination hosts, the
	// Envoy cluster.
	Destinations []string `json:"destinations,omitempty"`
	// Retry is its retry behaviour.
	Retry Retry `json:"retry"`

	// noCall, if set, says the route calls nothing (an Envoy redirect):
	// an edge may not choose it.
	noCall error
	// dests are an Istio route's destinations with their subsets and
	// ports, which choose a DestinationRule's traffic policy.
	dests []istioDest
}

// Label names the route in messages: its name, or its owner and path
// and what it matches.
func (r *Route) Label() string {
	if r.Name != "" {
		return strconv.Quote(r.Name)
	}
	s := r.Path
	if r.Owner != "" {
		s = r.Owner + " " + s
	}
	if r.Match != "" {
		s += " (" + r.Match + ")"
	}
	return s
}

// aliases are the strings an edge's route or method may choose the
// route by: its name, its path, its owner's name with either, its index
// in the file, what it matches.
func (r *Route) aliases(i int) []string {
	out := []string{r.Path, strconv.Itoa(i)}
	if r.Name != "" {
		out = append(out, r.Name)
	}
	if r.Match != "" {
		out = append(out, r.Match)
	}
	if _, owner, ok := strings.Cut(r.Owner, "/"); ok {
		out = append(out, owner+"/"+r.Path)
		if r.Name != "" {
			out = append(out, owner+"/"+r.Name)
		}
	}
	return out
}

// Config is what a configuration file holds for the audit: its routes,
// and the DestinationRules of an Istio file.
type Config struct {
	Kind   string            `json:"kind"`
	File   string            `json:"file"`
	Routes []Route           `json:"routes"`
	Rules  []DestinationRule `json:"destination_rules,omitempty"`
}

// ReadConfig reads every route of a configuration file of the given kind
// (KindEnvoy, KindIstio or KindGRPC) as its own program reads the file,
// each with its retry behaviour on an edge of ProtocolHTTP (KindGRPC:
// ProtocolGRPC). A problem is an *Error naming the file and line.
func ReadConfig(kind, file string, data []byte) (*Config, error) {
	c := &Config{Kind: kind, File: file}
	var err error
	switch kind {
	case KindEnvoy:
		c.Routes, err = envoyRoutes(file, data)
	case KindIstio:
		c.Routes, c.Rules, err = istioConfig(file, data)
	case KindGRPC:
		c.Routes, err = grpcRoutes(file, data)
	default:
		return nil, &Error{File: file, Err: fmt.Errorf("unknown configuration kind %q (want envoy, grpc or istio)", kind)}
	}
	if err != nil {
		return nil, err
	}
	protocol := ProtocolHTTP
	if kind == KindGRPC {
		protocol = ProtocolGRPC
	}
	for i := range c.Routes {
		c.Routes[i].Retry.setProtocol(protocol)
	}
	return c, nil
}

// setProtocol sets the edge's protocol and, from it, the failure classes
// it retries.
func (r *Retry) setProtocol(p string) {
	r.Protocol = p
	switch r.Kind {
	case KindEnvoy, KindIstio:
		r.On = []string{}
		if r.Attempts > 1 {
			r.On = envoyClasses(r.RetryOn, r.StatusCodes, p)
		}
	case KindGRPC:
		r.On = []string{}
		if r.Attempts > 1 {
			r.On = grpcClasses(r.RetryOn)
		}
	}
}

// choose returns the route sel names — by name, path, index or match —
// or, sel naming none, the file's one route, else the routes sending to
// the edge's callee to. Routes that choose alike (the same retry
// behaviour) are one choice.
func choose(file string, routes []Route, sel selector, to string) (*Route, error) {
	var cands []int
	for i := range routes {
		switch {
		case sel.name != "" && slices.Contains(routes[i].aliases(i), sel.name):
			cands = append(cands, i)
		case sel.name == "" && (len(routes) == 1 || sendsTo(&routes[i], to)):
			cands = append(cands, i)
		}
	}
	if len(cands) > 0 && alike(routes, cands) {
		return &routes[cands[0]], nil
	}
	labels := func(idx []int) string {
		var ls []string
		for _, i := range idx {
			ls = append(ls, routes[i].Label())
		}
		return strings.Join(ls, ", ")
	}
	all := make([]int, len(routes))
	for i := range all {
		all[i] = i
	}
	switch {
	case len(routes) == 0:
		return nil, sel.errorf("%s has no routes to choose from", file)
	case len(cands) > 1 && sel.name != "":
		return nil, sel.errorf("%q chooses %d routes of %s that retry differently (%s): name one by its path", sel.name, len(cands), file, labels(cands))
	case len(cands) > 1:
		return nil, sel.errorf("%s has %d routes to %s that retry differently (%s): name one with route", file, len(cands), to, labels(cands))
	case sel.name != "":
		return nil, sel.errorf("%s has no route %q (it has %s)", file, sel.name, labels(all))
	}
	return nil, sel.errorf("%s has %d routes, none of them to %s (%s): name one with route", file, len(routes), to, labels(all))
}

// sendsTo says whether route r sends to service to: a destination host
// or cluster whose name, or first DNS label, is to.
func sendsTo(r *Route, to string) bool {
	for _, d := range r.Destinations {
		if d == to || strings.SplitN(d, ".", 2)[0] == to {
			return true
		}
	}
	return false
}

// alike says whether the routes at idx retry alike.
func alike(routes []Route, idx []int) bool {
	key := func(r *Retry) string {
		return fmt.Sprint(r.Attempts, r.On, r.RetryOn, r.StatusCodes, r.PerTry, r.Timeout, r.Waits, r.Budget.Kind, r.Budget.RetryRatio, r.Budget.InFlight, r.Hedged)
	}
	first := key(&routes[idx[0]].Retry)
	for _, i := range idx[1:] {
		if key(&routes[i].Retry) != first {
			return false
		}
	}
	return true
}
