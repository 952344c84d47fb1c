package audit

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// File is one configuration file given to Infer: its name and contents.
type File struct {
	Name string
	Data []byte
}

// Infer builds a mesh from configuration files alone — Kubernetes
// manifests (a Helm or kustomize render, a kubectl dump, a directory),
// Envoy configurations, gRPC service configs — where they name the call
// graph: an Istio VirtualService route sends its hosts' callers to its
// destinations (a gateway's when it is bound to one: the gateway is then
// an entry point), an Envoy route sends the proxy (named by its file) to
// its cluster, a gRPC methodConfig sends its service's clients to the
// service. DestinationRules apply to their hosts across files. Of several
// routes from one caller to one callee, the one that makes the most
// attempts stands for them. Files (or documents) holding none of these are
// passed over, and so are files that are not YAML or JSON at all, which
// Mesh.Unread lists; if none holds any, Infer says so.
func Infer(name string, files []File, lo LoadOptions) (*Mesh, error) {
	m := &Mesh{Name: name, File: name}
	var rules []DestinationRule
	var found []inferred
	for _, f := range files {
		kind, err := configKind(f.Data)
		if err != nil && len(bytes.TrimSpace(f.Data)) > 0 {
			m.Unread = append(m.Unread, relabel(err, f.Name).Error())
		}
		if kind == "" {
			continue
		}
		c, err := ReadConfig(kind, f.Name, f.Data)
		if err != nil {
			return nil, err
		}
		rules = append(rules, c.Rules...)
		for i := range c.Routes {
			found = append(found, inferred{file: f.Name, kind: kind, route: c.Routes[i]})
		}
	}
	if len(found) == 0 {
		msg := "no VirtualService route, Envoy route or gRPC methodConfig in the files: nothing names a call (a mesh file names the calls otherwise; see docs/audit.md)"
		if len(m.Unread) > 0 {
			msg += "; passed over, not YAML or JSON: " + m.Unread[0] + " (a template is read once rendered: helm template, kustomize build)"
		}
		return nil, &Error{File: name, Err: errors.New(msg)}
	}
	for _, in := range found {
		r := in.route
		applyRules(&r.Retry, &r, rules)
		r.Retry.applySidecarDefault(lo.Sidecar)
		for _, from := range in.callers() {
			for _, to := range in.callees() {
				m.addInferred(from, to, in.file, &r)
			}
		}
	}
	m.inferEntries()
	if err := m.checkCycles(); err != nil {
		return nil, err
	}
	return m, nil
}

// inferred is a route found in a file, with the file's kind.
type inferred struct {
	file, kind string
	route      Route
}

// callers are who sends a route's calls: an Istio route's gateways (or
// "clients of" its first host, for the mesh's sidecars), the Envoy proxy
// the file configures, a gRPC service's clients.
func (in *inferred) callers() []string {
	r := &in.route
	switch in.kind {
	case KindIstio:
		var gws []string
		for _, g := range r.Gateways {
			if g != "mesh" {
				gws = append(gws, shortHost(g[strings.LastIndex(g, "/")+1:]))
			}
		}
		if len(gws) > 0 {
			return gws
		}
		if len(r.Hosts) > 0 {
			return []string{"clients of " + shortHost(r.Hosts[0])}
		}
	case KindEnvoy:
		return []string{strings.TrimSuffix(filepath.Base(in.file), filepath.Ext(in.file))}
	case KindGRPC:
		if len(r.Hosts) > 0 {
			return []string{"clients of " + in.callees()[0]}
		}
	}
	return nil
}

// callees are where a route sends: its destinations, or a gRPC
// methodConfig's service (the default entry: "any service").
func (in *inferred) callees() []string {
	if in.kind == KindGRPC {
		svc, _, _ := strings.Cut(in.route.Name, "/")
		if svc == "" {
			svc = "any service"
		}
		return []string{svc}
	}
	var out []string
	for _, d := range in.route.Destinations {
		if s := shortHost(d); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// shortHost is a host's first DNS label: reviews.default.svc → reviews.
func shortHost(h string) string { return strings.SplitN(h, ".", 2)[0] }

// addInferred adds the edge from → to that route r gives, or keeps the
// one already there if it makes more attempts.
func (m *Mesh) addInferred(from, to, file string, r *Route) {
	if from == to || to == "" {
		return
	}
	for _, s := range []string{from, to} {
		if m.service(s) == nil {
			m.Services = append(m.Services, Service{Name: s, At: Source{File: file}})
		}
	}
	e := Edge{From: from, To: to, At: r.Retry.At, Config: file, Select: r.Path, Retry: r.Retry}
	if r.Name != "" {
		e.Select = r.Name
	}
	for i := range m.Edges {
		if old := &m.Edges[i]; old.From == from && old.To == to {
			if r.Retry.Attempts > old.Retry.Attempts {
				*old = e
			}
			return
		}
	}
	m.Edges = append(m.Edges, e)
}

// inferEntries makes the services nothing calls the entry points.
func (m *Mesh) inferEntries() {
	called := map[string]bool{}
	for _, e := range m.Edges {
		called[e.To] = true
	}
	for _, s := range m.Services {
		if !called[s.Name] {
			m.Entries = append(m.Entries, s.Name)
		}
	}
}

// ConfigKind says which reader takes a configuration file, from what its
// documents hold, as the file's own tools would see them (YAML or JSON,
// several documents, a Kubernetes List; a kind quoted or not): KindIstio
// for a VirtualService or DestinationRule, KindGRPC for a JSON object with
// a methodConfig (in any case), KindEnvoy for a document with virtual
// hosts (virtual_hosts or virtualHosts) that is not a Kubernetes resource
// of another kind (an Envoy configuration held in a ConfigMap's string is
// passed over); "" for anything else, or for what does not parse.
func ConfigKind(data []byte) string {
	k, _ := configKind(data)
	return k
}

// configKind is ConfigKind, with the syntax error of a file that does not
// parse.
func configKind(data []byte) (string, error) {
	roots, err := readDocs("", data)
	if err != nil {
		return "", err
	}
	json := bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
	found := ""
	for _, root := range roots {
		switch k := docKind(root, json); {
		case k == KindIstio || k == KindGRPC:
			return k, nil // a VirtualService beside an Envoy document is read as Istio's
		case k != "":
			found = k
		}
	}
	return found, nil
}

// docKind is the reader of one document, or "".
func docKind(root *yaml.Node, json bool) string {
	if root.Kind == yaml.MappingNode {
		kind, _ := resourceKind(root)
		switch {
		case kind == "VirtualService" || kind == "DestinationRule":
			return KindIstio
		case kind != "" && strictyaml.Lookup(root, "apiVersion") != nil:
			return "" // a Kubernetes resource of another kind
		}
		for i := 0; i+1 < len(root.Content); i += 2 {
			if json && strings.EqualFold(root.Content[i].Value, "methodConfig") {
				return KindGRPC
			}
		}
	}
	if hasKey(root, 0, "virtual_hosts", "virtualHosts") {
		return KindEnvoy
	}
	return ""
}

// hasKey says whether a mapping under n, to maxDepth, has one of keys.
func hasKey(n *yaml.Node, depth int, keys ...string) bool {
	if n == nil || depth > maxDepth {
		return false
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if slices.Contains(keys, n.Content[i].Value) || hasKey(n.Content[i+1], depth+1, keys...) {
				return true
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if hasKey(c, depth+1, keys...) {
				return true
			}
		}
	}
	return false
}

// IsManifest says whether data holds Kubernetes resources (a document
// with apiVersion and kind), which Infer reads or passes over, rather than
// a mesh file.
func IsManifest(data []byte) bool {
	roots, err := readDocs("", data)
	if err != nil {
		return false
	}
	for _, r := range roots {
		if k, _ := resourceKind(r); k != "" && strictyaml.Lookup(r, "apiVersion") != nil {
			return true
		}
	}
	return false
}

// IsMesh says whether data is a mesh file (it lists services and edges)
// rather than configuration to infer a mesh from.
func IsMesh(data []byte) bool {
	roots, err := readDocs("", data)
	if err != nil || len(roots) != 1 {
		return false
	}
	return strictyaml.Lookup(roots[0], "services") != nil && strictyaml.Lookup(roots[0], "edges") != nil
}

// relabel names file in a syntax error read without a file name.
func relabel(err error, file string) error {
	var e *Error
	if errors.As(err, &e) && e.File == "" {
		c := *e
		c.File = file
		return &c
	}
	return err
}
