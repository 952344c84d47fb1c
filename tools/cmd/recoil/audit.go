package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/audit"
	"github.com/recoil-go/recoil/tools/sim/blast"
)

func init() {
	register(command{"audit", "a mesh's retry configuration multiplied out: attempts per leaf, amplification, tipping point, hold, findings", runAudit})
}

var auditHelp = help{
	usage: "recoil audit [flags] mesh.yaml | recoil audit [flags] FILE|DIR|- ...",
	about: `
Reads a call graph — services, entry points and the edges between them,
each edge's retries given by the configuration that sets them: an Envoy
route configuration or bootstrap, a gRPC service config, an Istio
VirtualService or a recoil policy file — and multiplies it out with the
arithmetic of package sim/blast. For each entry point it prints the
attempts one request can send each service for each failure class (503,
500, reset, 429: a layer multiplies only what it retries), the worst case,
what the hop protocol bounds it to, and what is left once the budgets have
drained, the load amplification at -failure-rate, the failure rate at
which the retries alone push a service past its capacity, and the longest
the slowest path can hold the caller. Then it lists each edge that lacks a
retry budget, a deadline or jitter, or whose attempts outlast its timeout,
at the file and line that says so (or should).

Given configuration files, a directory of them or - (standard input, as
from helm template or kustomize build) instead of a mesh file, it builds
the graph from what the files name: VirtualService routes from their
gateways or their hosts' clients to their destinations, Envoy routes from
the proxy to their clusters, gRPC methodConfigs from a service's clients.`,
	examples: `  recoil audit examples/mesh/mesh.yaml                   three layers of three attempts: 27 at the model API
  recoil audit examples/mesh/mesh-budgeted.yaml          the same mesh with budgets
  recoil audit -failure-rate 30% -headroom 1.5 mesh.yaml
  recoil audit -chart mesh.svg mesh.yaml                 the graph, each edge with its multiplier
  recoil audit -json mesh.yaml | jq '.entries[0].services'
  recoil audit -strict mesh.yaml                         exit 1 if there is any finding (for CI)
  helm template shop ./chart | recoil audit -            the rendered VirtualServices and DestinationRules
  recoil audit k8s/                                      every manifest under k8s/
  recoil audit -sidecar-retry-on 5xx,connect-failure k8s/  a mesh whose default retry policy is its own`,
	notes: `
The mesh file lists services (a name, or {name, latency, sidecar}), entries,
and edges {from, to, kind, config, route, method, protocol, sidecar,
sidecar_route}: kind is envoy, grpc, istio, recoil or none; config is the
configuration file, relative to the mesh file; route chooses an Envoy or
Istio route by name, path, index or match (left out: the route to the
edge's callee), method a gRPC method (package.Service/Method). A service
with sidecar: istio (or a mesh with sidecars: istio) sends its calls through
an Istio sidecar, which retries each of the app's attempts by default;
sidecar names the VirtualService that sets it instead. The sidecar of a
service called over HTTP also retries its own app on a reset before the
request reached it (Istio 1.24 on; -inbound-retries 0 for none). docs/audit.md
has the formats and every figure.

Worst case: every attempt fails and every budget is full, as at the start
of an outage: the product of each edge's attempts along a path (3 × 3 × 3 =
27), for the failure class that multiplies most. Bounded: the same under
the hop protocol's edge budgets. Sustained: once budgets have drained — a
ratio budget allows its ratio, a token bucket nothing, a cap on retries in
flight its share of -in-flight calls.

Amplification and tipping point, two ways: "independent", each attempt at
the failing service failing at the rate (a retry may succeed; blast's model,
layer on layer), and "persistent", that share of requests failing every
attempt (a dependency that is down for them), budgets drained. Capacity is
-headroom times the load a service sees when nothing fails.`,
	exit: "0 done; 1 a file could not be read, or (with -strict) there were findings; 2 usage error.",
}

// auditStdin is what "recoil audit -" reads.
var auditStdin io.Reader = os.Stdin

func runAudit(_ context.Context, args []string, stdout, stderr io.Writer) error {
	o := audit.DefaultOptions()
	sd := audit.DefaultSidecar()
	fs := newFlags("audit", stdout, auditHelp)
	fs.Var((*rateFlag)(&o.FailureRate), "failure-rate", "failure rate the amplification is priced at, a fraction or a percentage: 0.1 or 10%")
	fs.Float64Var(&o.Headroom, "headroom", o.Headroom, "each service's capacity as a multiple of its load when nothing fails, at least 1")
	fs.Float64Var(&o.Step, "step", o.Step, "step of the failure-rate slider the tipping point is read on, more than 0 and at most 1")
	fs.Float64Var(&o.InFlight, "in-flight", o.InFlight, "calls in flight at which a cap on retries in flight (Envoy's max_retries) is priced, at least 1")
	fs.IntVar(&sd.Retries, "sidecar-retries", sd.Retries, "retries an Istio sidecar makes on a route no VirtualService gives retries")
	fs.StringVar(&sd.RetryOn, "sidecar-retry-on", sd.RetryOn, "the conditions an Istio sidecar retries on such a route (add 503 for Istio before 1.24)")
	in := audit.DefaultInbound()
	fs.IntVar(&in.Retries, "inbound-retries", in.Retries, "retries an Istio sidecar makes at its own app on reset-before-request (0: off, as ENABLE_INBOUND_RETRY_POLICY=false and Istio before 1.24)")
	asJSON := fs.Bool("json", false, "print the audit as one JSON object")
	chartPath := fs.String("chart", "", "draw the graph, each edge with its multiplier, to `file`: SVG, or PNG if the name ends in .png")
	strict := fs.Bool("strict", false, "fail (exit 1) when there is any finding")
	pos, err := fs.parseInterspersed(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("name a mesh file (see examples/mesh/mesh.yaml), or configuration files, a directory or - for standard input")
	}
	if err := checkAuditFlags(fs, o, sd); err != nil {
		return err
	}
	if in.Retries < 0 || in.Retries > 1000 {
		return usagef("-inbound-retries %d: must be between 0 and 1000", in.Retries)
	}
	in.Off = in.Retries == 0
	format := ""
	if *chartPath != "" {
		if format, err = chartFormat("-chart", *chartPath); err != nil {
			return err
		}
	}
	chartOut, err := checkOutput("-chart", *chartPath)
	if err != nil {
		return err
	}
	m, err := loadAudit(pos, audit.LoadOptions{Sidecar: sd, Inbound: in})
	if err != nil {
		return err
	}
	for _, u := range m.Unread {
		fmt.Fprintf(stderr, "recoil audit: passed over, not YAML or JSON: %s\n", u)
	}
	r, err := audit.Analyze(m, o)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		err = writeAudit(stdout, r)
	}
	if err != nil {
		return err
	}
	if err := chartOut.write(func(w io.Writer) error { return auditChart(m, r).WriteTo(w, format) }); err != nil {
		return err
	}
	if *strict && len(r.Findings) > 0 {
		return fmt.Errorf("-strict: %d finding(s) in %s", len(r.Findings), m.File)
	}
	return nil
}

// checkAuditFlags checks every flag before work starts.
func checkAuditFlags(fs *flags, o audit.Options, sd audit.SidecarDefault) error {
	if err := fs.noZero(map[string]string{"step": "must be more than 0 and at most 1"}); err != nil {
		return err
	}
	switch {
	case !(o.FailureRate >= 0 && o.FailureRate <= 1):
		return usagef("-failure-rate %s: must be between 0 and 1 (0%% to 100%%)", pct(o.FailureRate))
	case !(o.Headroom >= 1 && o.Headroom <= 1e6):
		return usagef("-headroom %v: must be between 1 (no spare capacity) and 1e6", o.Headroom)
	case !(o.Step > 0 && o.Step <= 1):
		return usagef("-step %v: must be more than 0 and at most 1", o.Step)
	case !(o.InFlight >= 1 && o.InFlight <= 1e9):
		return usagef("-in-flight %v: must be between 1 and 1e9", o.InFlight)
	case sd.Retries < 0 || sd.Retries > 1000:
		return usagef("-sidecar-retries %d: must be between 0 and 1000", sd.Retries)
	}
	return nil
}

// loadAudit reads what the command was given: one mesh file, or
// configuration files, directories of them and - (standard input) to
// build the mesh from.
func loadAudit(args []string, lo audit.LoadOptions) (*audit.Mesh, error) {
	var files []audit.File
	for _, a := range args {
		fs, err := auditFiles(a)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	if len(args) == 1 && len(files) == 1 && files[0].Name == args[0] && args[0] != "-" {
		// One file: a mesh file, or a file read as one for its errors,
		// unless it is a configuration or Kubernetes manifests to build
		// the mesh from.
		if f := files[0]; audit.IsMesh(f.Data) || audit.ConfigKind(f.Data) == "" && !audit.IsManifest(f.Data) {
			return audit.LoadWith(f.Name, lo)
		}
	}
	for i, f := range files {
		if audit.IsMesh(f.Data) && slices.Contains(args, f.Name) {
			return nil, usagef("%s is a mesh file: audit it alone, or give configuration files to build the mesh from", f.Name)
		}
		if audit.IsMesh(f.Data) {
			files[i].Data = nil // a mesh file in a directory: the configurations are what count
		}
	}
	name := strings.Join(args, " ")
	if name == "-" {
		name = stdinName
	}
	return audit.Infer(name, files, lo)
}

// auditFiles reads argument a: standard input for -, every .yaml, .yml
// and .json file under a directory, or the file.
func auditFiles(a string) ([]audit.File, error) {
	if a == "-" {
		data, err := io.ReadAll(io.LimitReader(auditStdin, maxAuditFile+1))
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		if len(data) > maxAuditFile {
			return nil, fmt.Errorf("standard input: larger than %d MiB", maxAuditFile>>20)
		}
		return []audit.File{{Name: stdinName, Data: data}}, nil
	}
	if st, err := os.Stat(a); err != nil || !st.IsDir() {
		data, err := readAuditFile(a)
		return []audit.File{{Name: a, Data: data}}, err
	}
	var out []audit.File
	err := filepath.WalkDir(a, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
			data, err := readAuditFile(p)
			out = append(out, audit.File{Name: p, Data: data})
			return err
		}
		return nil
	})
	return out, err
}

// stdinName is what the report and its errors call standard input.
const stdinName = "standard input"

// maxAuditFile bounds a file or standard input the command reads.
const maxAuditFile = 16 << 20

func readAuditFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAuditFile+1))
	if err == nil && len(data) > maxAuditFile {
		err = fmt.Errorf("%s: larger than %d MiB: not a configuration file", p, maxAuditFile>>20)
	}
	return data, err
}

// writeAudit prints r as the text report.
func writeAudit(w io.Writer, r *audit.Report) error {
	p := &printer{w: w}
	o := r.Options
	p.f("recoil audit: mesh %s (%s)\n", r.Mesh, r.File)
	p.f("priced at a %s failure rate; each service's capacity %s× its load when nothing fails\n\n", pct(o.FailureRate), num(o.Headroom, -3))

	writeEdges(p, r.Edges)

	for _, er := range r.Entries {
		p.f("Entry %s: what one request sends each service\n", er.Entry)
		t := table{{"service", "paths", "503 · 500 · reset · 429", "worst case", "bounded", "sustained", "independent " + pct(o.FailureRate), "persistent " + pct(o.FailureRate), "tips at (independent)", "(persistent)", ""}}
		for _, s := range er.Services {
			name := s.Service
			if s.Leaf {
				name += " (leaf)"
			}
			over := ""
			if s.Overloaded {
				over = " over capacity"
			}
			t = append(t, []string{name, strconv.Itoa(s.Paths), classWord(s), num(s.WorstCase, -2), num(s.Bounded, -2), num(s.Sustained, -2),
				"×" + num(s.Amplification, -3), "×" + num(s.Persistent, -3), tipWord(s.Tipping), tipWord(s.PersistentTipping), over})
		}
		t.write(p)
		if top, ok := er.Summary(); ok {
			p.f("  %s attempts reach %s for one request when everything fails (class %s)", num(top.WorstCase, -2), top.Service, top.Class)
			if top.Bounded < top.WorstCase {
				p.f(" — %s under the hop protocol", num(top.Bounded, -2))
			}
			p.f("; %s once the budgets have drained\n", num(top.Sustained, -2))
		}
		p.f("  tips: %s\n", tipSentence("independent failures", er.Tipping, er.TipsAt))
		p.f("        %s\n", tipSentence("a failure that lasts", er.PersistentTipping, er.PersistentTipsAt))
		h := er.Hold
		if h.Unbounded {
			p.f("  hold: unbounded on %s — %s, and no timeout on the way stops the wait\n\n", strings.Join(h.Path, " → "), h.Why)
		} else {
			p.f("  hold: at most %s on %s, bounded by %s\n\n", secs(h.Duration.Seconds(), 100*time.Millisecond), strings.Join(h.Path, " → "), h.BoundBy)
		}
	}

	if len(r.Findings) == 0 {
		p.f("Findings: none — every edge has a budget, a deadline and jitter, and its attempts fit its timeout\n")
		return p.err
	}
	p.f("Findings (%d)\n", len(r.Findings))
	for _, f := range r.Findings {
		p.f("  %s\n", f)
	}
	return p.err
}

// writeEdges prints the edges table: each edge's layers, its own, its
// caller's sidecar's and its callee's sidecar's inbound retries.
func writeEdges(p *printer, edges []audit.EdgeReport) {
	p.f("Edges\n")
	t := table{{"edge", "kind", "attempts", "retries", "sustained", "budget", "deadline", "waits", "configured at"}}
	inbound := false
	for _, e := range edges {
		for k, rt := range edgeLayers(e) {
			row := []string{e.Name(), rt.Kind, strconv.Itoa(e.Attempts), onWord(rt), "×" + num(e.Sustained, -2),
				budgetWord(rt.Budget), deadlineWord(*rt), waitsWord(*rt), rt.At.String()}
			if k > 0 {
				row[0], row[1], row[2], row[4] = "", "+ sidecar", "", ""
				if rt.IstioDefault {
					row[1] = "+ sidecar (default)"
				}
			}
			t = append(t, row)
		}
		if in := e.Inbound; in != nil {
			inbound = true
			t = append(t, []string{"", "+ " + e.To + "'s sidecar, inbound", strconv.Itoa(e.InboundAttempts), onWord(in), "×" + strconv.Itoa(in.Attempts),
				budgetWord(in.Budget), deadlineWord(*in), waitsWord(*in), in.At.String()})
		}
	}
	t.write(p)
	p.f("  (attempts: per call, its sidecar's included; retries: the failure classes retried; sustained: per call once the budget has drained)\n")
	if inbound {
		p.f("  (inbound: per attempt that reaches the callee's sidecar, when the callee's own app refuses or resets it)\n")
	}
	p.f("\n")
}

// edgeLayers are an edge's retry layers: its own, then its sidecar's.
func edgeLayers(e audit.EdgeReport) []*audit.Retry {
	if e.Sidecar == nil {
		return []*audit.Retry{&e.Retry}
	}
	return []*audit.Retry{&e.Retry, e.Sidecar}
}

// onWord lists the failure classes a layer retries.
func onWord(r *audit.Retry) string {
	if r.Hedged && r.Kind == audit.KindGRPC {
		return "hedged"
	}
	if len(r.On) == 0 {
		return "none"
	}
	return strings.Join(r.On, ",")
}

// classWord is a service's worst case for each failure class.
func classWord(s audit.Reach) string {
	var ws []string
	for _, c := range s.Classes {
		ws = append(ws, num(c.WorstCase, -2))
	}
	return strings.Join(ws, " · ")
}

func budgetWord(b audit.Budget) string {
	switch b.Kind {
	case audit.BudgetRatio:
		return "ratio " + pct(b.RetryRatio)
	case audit.BudgetShare:
		return "share " + pct(b.RetryRatio)
	case audit.BudgetTokenBucket:
		return "token bucket " + num(b.ThrottleRatio, -3)
	}
	if b.InFlight > 0 {
		return strconv.Itoa(b.InFlight) + " in flight"
	}
	return "none"
}

func deadlineWord(r audit.Retry) string {
	var parts []string
	if r.Timeout > 0 {
		s := r.Timeout.String()
		if r.TimeoutDefault {
			s += " (default)"
		}
		parts = append(parts, s)
	}
	if r.PerTry > 0 {
		parts = append(parts, r.PerTry.String()+" per try")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func waitsWord(r audit.Retry) string {
	switch {
	case r.Hedged:
		return "hedged every " + r.HedgeDelay.String()
	case len(r.Waits) == 0:
		return "—"
	}
	var ws []string
	for _, w := range r.Waits {
		ws = append(ws, w.String())
	}
	s := "≤" + strings.Join(ws, ", ≤")
	if r.Jitter {
		s += " jittered"
	} else {
		s += " no jitter"
	}
	if r.ServerWait > 0 {
		s += "; Retry-After ≤" + r.ServerWait.String()
	}
	return s
}

func tipWord(t blast.Tipping) string {
	if !t.Exists {
		return "never"
	}
	return pct(t.Exact)
}

func tipSentence(what string, t blast.Tipping, at string) string {
	if !t.Exists {
		return fmt.Sprintf("with %s, never: retries alone do not reach any service's capacity", what)
	}
	if t.Exact == 0 {
		return fmt.Sprintf("with %s, at once: %s is over capacity with nothing failing", what, at)
	}
	return fmt.Sprintf("with %s, at %s (slider %s) at %s", what, pct(t.Exact), pct(t.Slider), at)
}
