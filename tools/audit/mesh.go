package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec/strictyaml"
)

// Mesh is a call graph and the retry behaviour of each of its edges: the
// services, the entry points requests arrive at, and the edges, each read
// from the configuration it names. Load and Parse make one from a mesh
// file; it has no cycle. A Mesh is plain data, safe to read from several
// goroutines.
type Mesh struct {
	// Name names the mesh in reports; the file's name if left out.
	Name string `json:"name"`
	// File is the mesh file's name as given.
	File string `json:"file"`
	// Services are the services, in the file's order.
	Services []Service `json:"services"`
	// Entries are the services requests arrive at from outside.
	Entries []string `json:"entries"`
	// Edges are the calls, in the file's order.
	Edges []Edge `json:"edges"`
	// Unread are the files Infer passed over because they are not YAML or
	// JSON at all (an unrendered template, say), each "file:line: why".
	Unread []string `json:"unread,omitempty"`
}

// Service is one service of the mesh.
type Service struct {
	Name string `json:"name"`
	// Latency is the longest the service takes to answer by itself, its
	// calls not counted; HasLatency says it was given. A service that
	// calls nothing and has none is a dependency nothing bounds: it can
	// hang.
	Latency    time.Duration `json:"-"`
	HasLatency bool          `json:"has_latency"`
	// Sidecar names the proxy beside the service that its calls go
	// through: "istio" (an Istio sidecar, which retries by default), or
	// empty for none.
	Sidecar string `json:"sidecar,omitempty"`
	At      Source `json:"at"`
}

// MarshalJSON writes Latency as latency_ms (null when not given).
func (s Service) MarshalJSON() ([]byte, error) {
	type fields Service
	var lat *float64
	if s.HasLatency {
		v := ms(s.Latency)
		lat = &v
	}
	return json.Marshal(struct {
		fields
		LatencyMS *float64 `json:"latency_ms"`
	}{fields(s), lat})
}

// Edge is one call from a service to another, with the retry behaviour
// its configuration gives it.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	// At is the edge's line in the mesh file.
	At Source `json:"at"`
	// Config is the configuration file as the mesh names it, relative to
	// the mesh file; Select the route or method chosen in it.
	Config string `json:"config,omitempty"`
	Select string `json:"select,omitempty"`
	// Retry is what the configuration says the edge does.
	Retry Retry `json:"retry"`
	// Sidecar, if not nil, is what the caller's sidecar proxy does on the
	// same hop: it retries each of the caller's attempts (an Istio
	// sidecar's VirtualService route, or the mesh's default route).
	Sidecar *Retry `json:"sidecar,omitempty"`
	// Inbound, if not nil, is what the callee's Istio sidecar does on the
	// inbound route to its app: it retries a reset before the request
	// reached the app (see InboundDefault).
	Inbound *Retry `json:"inbound,omitempty"`
}

// Name returns "from → to".
func (e *Edge) Name() string { return e.From + " → " + e.To }

// retries returns the edge's retry layers: its own, then its sidecar's.
func (e *Edge) retries() []*Retry {
	if e.Sidecar == nil {
		return []*Retry{&e.Retry}
	}
	return []*Retry{&e.Retry, e.Sidecar}
}

// LoadOptions are what reading a mesh takes besides its files. The zero
// LoadOptions reads Istio's default sidecar retries (DefaultSidecar).
type LoadOptions struct {
	// Sidecar is what an Istio sidecar does on a route no VirtualService
	// gives retries: the mesh's default retry policy.
	Sidecar SidecarDefault
	// Inbound is what an Istio sidecar does on the inbound route to its
	// own app (DefaultInbound unless set).
	Inbound InboundDefault
}

// Load reads the mesh file at path and every configuration its edges name,
// relative to the mesh file's directory (see Parse).
func Load(path string) (*Mesh, error) { return LoadWith(path, LoadOptions{}) }

// LoadWith is Load with lo.
func LoadWith(path string, lo LoadOptions) (*Mesh, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	return ParseWith(path, data, func(name string) ([]byte, error) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return readFile(name)
	}, lo)
}

// SidecarIstio is the one sidecar the mesh file names: an Istio sidecar,
// whose default route retries (see SidecarDefault).
const SidecarIstio = "istio"

// Opener returns the contents of a configuration file a mesh names.
type Opener func(name string) ([]byte, error)

// Parse reads a mesh file (YAML, decoded strictly: an unknown field, a
// field given twice or a value of the wrong type is an error) and, through
// open, the configuration each edge names:
//
//	name: shop                       # optional
//	services:                        # a name, or {name, latency}
//	  - edge-proxy
//	  - {name: model-api, latency: 30s}
//	entries: [edge-proxy]            # where requests arrive
//	edges:
//	  - {from: edge-proxy, to: frontend, kind: envoy, config: envoy.yaml, route: frontend}
//	  - {from: frontend, to: backend, kind: grpc, config: service-config.json, method: shop.Backend/Get}
//	  - {from: backend, to: model-api, kind: recoil, config: model-policy.yaml}
//	  - {from: backend, to: cache, kind: istio, config: cache-vs.yaml, route: default}
//	  - {from: backend, to: audit-log, kind: none}   # one attempt, nothing configured
//
// Every problem is an *Error naming the file, line and field — the mesh's,
// or the configuration's for a problem inside it. A cycle in the graph is
// an error naming the edge that closes it.
func Parse(file string, data []byte, open Opener) (*Mesh, error) {
	return ParseWith(file, data, open, LoadOptions{})
}

// collect returns a list item visitor that appends each item to *dst, to
// be decoded once the whole mapping is read.
func collect(dst *[]*yaml.Node) func(int, *yaml.Node) error {
	return func(_ int, item *yaml.Node) error {
		*dst = append(*dst, item)
		return nil
	}
}

// ParseWith is Parse with lo.
func ParseWith(file string, data []byte, open Opener, lo LoadOptions) (*Mesh, error) {
	root, err := strictyaml.Read(file, data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, &Error{File: file, Err: errors.New("the file is empty: want services, entries and edges")}
	}
	m := &Mesh{File: file}
	d := &strictyaml.Decoder{File: file}
	if root, err = d.Visit(root, ""); err != nil {
		return nil, err
	}
	if err := notAMesh(d, root); err != nil {
		return nil, err
	}
	services := map[string]int{}
	var entryNodes, edgeNodes []*yaml.Node
	sidecars := ""
	pos, err := d.Mapping(root, "", []string{"name", "services", "entries", "edges", "sidecars"}, func(key string, v *yaml.Node, path string) error {
		switch key {
		case "name":
			m.Name, err = d.String(v, path)
			return err
		case "sidecars":
			if sidecars, err = d.String(v, path); err == nil && sidecars != SidecarIstio {
				err = d.Errorf(v, path, "unknown sidecar %q (want istio)", sidecars)
			}
			return err
		case "services":
			return d.List(v, path, func(i int, item *yaml.Node) error {
				return m.addService(d, item, strictyaml.Index(path, i), services)
			})
		case "entries":
			return d.List(v, path, collect(&entryNodes))
		case "edges":
			return d.List(v, path, collect(&edgeNodes))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.Name == "" {
		m.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if len(m.Services) == 0 {
		return nil, pos.Errorf("services", "missing: list the services")
	}
	if len(entryNodes) == 0 {
		return nil, pos.Errorf("entries", "missing: name the services requests arrive at")
	}
	if err := m.decodeEntries(d, entryNodes, services); err != nil {
		return nil, err
	}
	if len(edgeNodes) == 0 {
		return nil, pos.Errorf("edges", "missing: list the calls between services")
	}
	for i := range m.Services {
		if m.Services[i].Sidecar == "" {
			m.Services[i].Sidecar = sidecars
		}
	}
	for i, n := range edgeNodes {
		e, err := decodeEdge(d, n, strictyaml.Index("edges", i), services, m, open, lo)
		if err != nil {
			return nil, err
		}
		m.Edges = append(m.Edges, e)
	}
	if err := m.checkCycles(); err != nil {
		return nil, err
	}
	return m, nil
}

// notAMesh refuses a configuration file given where a mesh file goes.
func notAMesh(d *strictyaml.Decoder, root *yaml.Node) error {
	for _, kw := range [][2]string{{"virtual_hosts", "an Envoy route configuration"}, {"static_resources", "an Envoy bootstrap"},
		{"methodConfig", "a gRPC service config"}, {"spec", "a Kubernetes resource"}} {
		if key, what := kw[0], kw[1]; strictyaml.Lookup(root, key) != nil {
			return d.Errorf(root, "", "this looks like %s, not a mesh: a mesh file lists services, entries and edges, and names such a file in an edge's config, or give the configuration files to recoil audit to build the mesh from them (see docs/audit.md)", what)
		}
	}
	return nil
}

// addService reads the service at item, listed once.
func (m *Mesh) addService(d *strictyaml.Decoder, item *yaml.Node, path string, services map[string]int) error {
	s, err := decodeService(d, item, path)
	if err != nil {
		return err
	}
	if first, dup := services[s.Name]; dup {
		return d.Errorf(item, path, "service %q is listed twice (first on line %d)", s.Name, m.Services[first].At.Line)
	}
	services[s.Name] = len(m.Services)
	m.Services = append(m.Services, s)
	return nil
}

// decodeEntries reads the entry points, each a service listed once.
func (m *Mesh) decodeEntries(d *strictyaml.Decoder, nodes []*yaml.Node, services map[string]int) error {
	for i, n := range nodes {
		path := strictyaml.Index("entries", i)
		name, err := d.String(n, path)
		if err != nil {
			return err
		}
		if _, ok := services[name]; !ok {
			return d.Errorf(n, path, "%q is not a service (the services are %s)", name, serviceNames(m))
		}
		if slices.Contains(m.Entries, name) {
			return d.Errorf(n, path, "%q is listed twice", name)
		}
		m.Entries = append(m.Entries, name)
	}
	return nil
}

func serviceNames(m *Mesh) string {
	var names []string
	for _, s := range m.Services {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

func decodeService(d *strictyaml.Decoder, n *yaml.Node, path string) (Service, error) {
	s := Service{At: Source{File: d.File, Line: n.Line}}
	if n.Kind == yaml.ScalarNode {
		name, err := d.String(n, path)
		s.Name = name
		if err == nil && name == "" {
			err = d.Errorf(n, path, "a service needs a name")
		}
		return s, err
	}
	pos, err := d.Mapping(n, path, []string{"name", "latency", "sidecar"}, func(key string, v *yaml.Node, p string) error {
		var err error
		switch key {
		case "name":
			s.Name, err = d.String(v, p)
		case "sidecar":
			if s.Sidecar, err = d.String(v, p); err == nil && s.Sidecar != SidecarIstio && s.Sidecar != "" {
				err = d.Errorf(v, p, "unknown sidecar %q (want istio)", s.Sidecar)
			}
		case "latency":
			s.Latency, err = d.Duration(v, p)
			if err == nil && (s.Latency < 0 || s.Latency > maxDuration) {
				err = d.Errorf(v, p, "must be 0 to %v", maxDuration)
			}
			s.HasLatency = true
		}
		return err
	})
	if err == nil && s.Name == "" {
		err = pos.Errorf("name", "missing: a service needs a name")
	}
	return s, err
}

// edgeFields are an edge's fields as the mesh file writes them.
type edgeFields struct {
	kind, route, method, protocol, sidecar, sidecarRoute string
}

func decodeEdge(d *strictyaml.Decoder, n *yaml.Node, path string, services map[string]int, m *Mesh, open Opener, lo LoadOptions) (Edge, error) {
	e := Edge{At: Source{File: d.File, Line: n.Line}}
	var f edgeFields
	pos, err := d.Mapping(n, path, []string{"from", "to", "kind", "config", "route", "method", "protocol", "sidecar", "sidecar_route"}, func(key string, v *yaml.Node, p string) error {
		var err error
		dst := map[string]*string{"from": &e.From, "to": &e.To, "kind": &f.kind, "config": &e.Config, "route": &f.route,
			"method": &f.method, "protocol": &f.protocol, "sidecar": &f.sidecar, "sidecar_route": &f.sidecarRoute}[key]
		*dst, err = d.String(v, p)
		return err
	})
	if err != nil {
		return e, err
	}
	if err := checkEdge(&e, f, pos, services, m); err != nil {
		return e, err
	}
	if f.kind == KindNone {
		e.Retry = Retry{Kind: KindNone, At: e.At, Attempts: 1, AttemptsAt: e.At, Jitter: true, JitterNote: "a plain call", On: []string{}}
	} else if e.Retry, err = edgeRetry(d, pos, path, &e, f, open, lo); err != nil {
		return e, err
	}
	if f.protocol == "" {
		f.protocol = ProtocolHTTP
		if f.kind == KindGRPC {
			f.protocol = ProtocolGRPC
		}
	}
	if f.kind != KindRecoil && f.kind != KindNone {
		e.Retry.setProtocol(f.protocol)
	}
	e.Sidecar, err = edgeSidecar(d, pos, path, &e, f, m, open, lo)
	if e.Sidecar != nil {
		e.Sidecar.setProtocol(f.protocol)
	}
	e.Inbound = inboundRetry(&e, m.service(e.To), f.protocol, lo.Inbound)
	return e, err
}

// checkEdge checks an edge's fields against each other and the services.
func checkEdge(e *Edge, f edgeFields, pos strictyaml.Pos, services map[string]int, m *Mesh) error {
	for _, fv := range []struct{ key, v string }{{"from", e.From}, {"to", e.To}} {
		if fv.v == "" {
			return pos.Errorf(fv.key, "missing: an edge goes from a service to another")
		}
		if _, ok := services[fv.v]; !ok {
			return pos.Errorf(fv.key, "%q is not a service (the services are %s)", fv.v, serviceNames(m))
		}
	}
	kind := f.kind
	switch {
	case e.From == e.To:
		return pos.Errorf("to", "a cycle: %s calls itself, and retries around a cycle have no bound", e.From)
	case kind == "":
		return pos.Errorf("kind", "missing: want one of %s", strings.Join(kinds, ", "))
	case !slices.Contains(kinds, kind):
		return pos.Errorf("kind", "unknown edge kind %q (want one of %s)", kind, strings.Join(kinds, ", "))
	case kind == KindNone && e.Config != "":
		return pos.Errorf("config", "an edge of kind none reads no configuration")
	case kind != KindNone && e.Config == "":
		return pos.Errorf("config", "missing: an edge of kind %s reads its retries from a configuration file", kind)
	case f.route != "" && kind != KindEnvoy && kind != KindIstio:
		return pos.Errorf("route", "chooses an Envoy or Istio route; an edge of kind %s has none (use method for gRPC)", kind)
	case f.method != "" && kind != KindGRPC:
		return pos.Errorf("method", "chooses a gRPC method; an edge of kind %s has none", kind)
	case f.protocol != "" && f.protocol != ProtocolHTTP && f.protocol != ProtocolGRPC:
		return pos.Errorf("protocol", "unknown protocol %q (want http or grpc)", f.protocol)
	case f.sidecar != "" && (kind == KindEnvoy || kind == KindIstio):
		return pos.Errorf("sidecar", "an edge of kind %s is a proxy's own route: its sidecar is itself", kind)
	case f.sidecarRoute != "" && f.sidecar == "":
		return pos.Errorf("sidecar_route", "chooses a route of the sidecar's VirtualService: name it with sidecar")
	}
	return nil
}

// edgeRetry reads the configuration edge e names.
func edgeRetry(d *strictyaml.Decoder, pos strictyaml.Pos, path string, e *Edge, f edgeFields, open Opener, lo LoadOptions) (Retry, error) {
	file, data, err := openConfig(d, pos, "config", e.Config, open)
	if err != nil {
		return Retry{}, err
	}
	sel := selectorAt(d, pos, path, "route", f.route)
	var r Retry
	switch f.kind {
	case KindEnvoy:
		r, err = parseEnvoy(file, data, sel, e.To)
	case KindIstio:
		r, err = parseIstio(file, data, sel, e.To, lo.Sidecar)
	case KindGRPC:
		r, err = parseGRPC(file, data, selectorAt(d, pos, path, "method", f.method))
		e.Select = f.method
	case KindRecoil:
		r, err = parseRecoil(file, data)
	}
	if f.kind != KindGRPC {
		e.Select = f.route
	}
	return r, err
}

// edgeSidecar returns what the caller's sidecar does on edge e: the route
// of the VirtualService the edge names with sidecar, or, for a caller
// with an Istio sidecar, Istio's default; nil for none.
func edgeSidecar(d *strictyaml.Decoder, pos strictyaml.Pos, path string, e *Edge, f edgeFields, m *Mesh, open Opener, lo LoadOptions) (*Retry, error) {
	if f.kind == KindEnvoy || f.kind == KindIstio {
		return nil, nil
	}
	if f.sidecar != "" {
		file, data, err := openConfig(d, pos, "sidecar", f.sidecar, open)
		if err != nil {
			return nil, err
		}
		r, err := parseIstio(file, data, selectorAt(d, pos, path, "sidecar_route", f.sidecarRoute), e.To, lo.Sidecar)
		return &r, err
	}
	if svc := m.service(e.From); svc == nil || svc.Sidecar != SidecarIstio {
		return nil, nil
	}
	r := Retry{Kind: KindIstio, At: e.At, IstioDefault: true, Jitter: true,
		Budget: Budget{Describe: "the sidecar's default route has no retry budget; Istio lets any number of retries be in flight", At: e.At}}
	r.applySidecarDefault(lo.Sidecar)
	return &r, nil
}

// openConfig reads configuration file name, relative to the mesh file.
func openConfig(d *strictyaml.Decoder, pos strictyaml.Pos, key, name string, open Opener) (string, []byte, error) {
	file := name
	if !filepath.IsAbs(file) && d.File != "" {
		file = filepath.Join(filepath.Dir(d.File), file)
	}
	data, err := open(name)
	if err != nil {
		var ye *Error
		if errors.As(err, &ye) {
			return file, nil, err
		}
		return file, nil, pos.Errorf(key, "cannot read %s: %v", file, pathErr(err))
	}
	return file, data, nil
}

// selectorAt is the selector of mesh field key of the edge at path.
func selectorAt(d *strictyaml.Decoder, pos strictyaml.Pos, path, key, name string) selector {
	sel := selector{name: name, field: strictyaml.Join(path, key), at: Source{File: d.File, Line: pos.Line}}
	if l, ok := pos.Lines[key]; ok {
		sel.at.Line = l
	}
	return sel
}

// pathErr drops the operation and path of an *os.PathError, which the
// message around it names already.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkCycles reports the first cycle, at the edge that closes it.
func (m *Mesh) checkCycles() error {
	out := m.outEdges()
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(s string) error
	visit = func(s string) error {
		color[s] = grey
		stack = append(stack, s)
		for _, i := range out[s] {
			e := &m.Edges[i]
			switch color[e.To] {
			case grey:
				start := slices.Index(stack, e.To)
				cycle := append(slices.Clone(stack[start:]), e.To)
				return &Error{File: e.At.File, Line: e.At.Line, Field: fmt.Sprintf("edges[%d]", i),
					Err: fmt.Errorf("a cycle: %s — retries around a cycle have no bound", strings.Join(cycle, " → "))}
			case white:
				if err := visit(e.To); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[s] = black
		return nil
	}
	for _, s := range m.Services {
		if color[s.Name] == white {
			if err := visit(s.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// outEdges maps each service to the indexes of its edges, in file order.
func (m *Mesh) outEdges() map[string][]int {
	out := map[string][]int{}
	for i, e := range m.Edges {
		out[e.From] = append(out[e.From], i)
	}
	return out
}

func (m *Mesh) service(name string) *Service {
	for i := range m.Services {
		if m.Services[i].Name == name {
			return &m.Services[i]
		}
	}
	return nil
}
