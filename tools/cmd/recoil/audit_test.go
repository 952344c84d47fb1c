package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const meshDir = "../../../examples/mesh"

func TestAuditText(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"the shipped mesh: 3 × 3 × 3", []string{"audit", meshDir + "/mesh.yaml"}, []string{
			"edge-proxy → frontend   envoy         3      503,500,reset         ×3",
			"model-api (leaf)      1          27 · 9 · 27 · 3          27       27         27",
			"27 attempts reach model-api for one request when everything fails (class 503); 27 once the budgets have drained",
			"with a failure that lasts, at 0.77% (slider 1%) at model-api",
			"hold: at most 15s on edge-proxy → frontend → backend → model-api, bounded by Envoy's default route timeout, 15s",
			"Findings (6)",
			meshDir + "/envoy-routes.yaml:12: no-budget: edge-proxy → frontend:",
			meshDir + "/backend-service-config.json:5: no-deadline: frontend → backend:",
			meshDir + "/model-policy.yaml:4: no-jitter: backend → model-api: backoff: exponential waits the same time on every caller",
		}},
		{"budgets bound it", []string{"audit", meshDir + "/mesh-budgeted.yaml"}, []string{
			"27 attempts reach model-api for one request when everything fails (class 503); 1.32 once the budgets have drained",
			"with a failure that lasts, at 62.5% (slider 62.5%) at model-api",
			"hold: at most 18.4s",
			"Findings: none",
		}},
		{"the hop protocol bounds it", []string{"audit", meshDir + "/hop.yaml"}, []string{
			"27 attempts reach model-api for one request when everything fails (class 503) — 3 under the hop protocol",
		}},
		{"flags after the file, a percentage", []string{"audit", meshDir + "/mesh.yaml", "-failure-rate", "30%", "-headroom", "1.5"}, []string{
			"priced at a 30% failure rate; each service's capacity 1.5× its load when nothing fails",
			"with a failure that lasts, at 1.92% (slider 2%) at model-api",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runCLI(t.Context(), tt.args...).check(t, tt.args, exitOK, tt.want, nil)
		})
	}
}

func TestAuditJSON(t *testing.T) {
	var r struct {
		Entries []struct {
			Services []struct {
				Service   string  `json:"service"`
				WorstCase float64 `json:"worst_case"`
				Sustained float64 `json:"sustained"`
			} `json:"services"`
		} `json:"entries"`
		Findings []struct {
			Check string `json:"check"`
			At    struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"at"`
		} `json:"findings"`
	}
	b := cliJSON(t, "audit", "-json", meshDir+"/mesh-budgeted.yaml")
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	leaf := r.Entries[0].Services[2]
	if leaf.Service != "model-api" || leaf.WorstCase != 27 || leaf.Sustained < 1.32-1e-9 || leaf.Sustained > 1.32+1e-9 {
		t.Errorf("leaf %+v, want model-api, 27, 1.32", leaf)
	}
	// Durations in float milliseconds, in fields ending in _ms.
	b = cliJSON(t, "audit", "-json", meshDir+"/mesh.yaml")
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	durations := 0
	walkJSON(v, "", func(path, key string, val any) {
		switch {
		case strings.HasSuffix(key, "_ns"), strings.HasSuffix(key, "_s") && !strings.HasSuffix(key, "_per_s"):
			t.Errorf("%s: a duration not in milliseconds", path)
		case strings.HasSuffix(key, "_ms"):
			durations++
			if !numbers(val) {
				t.Errorf("%s = %v: want a number, numbers or null", path, val)
			}
		}
	})
	if durations == 0 {
		t.Error("no _ms field")
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 6 || r.Findings[0].At.Line != 12 || !strings.HasSuffix(r.Findings[0].At.File, "envoy-routes.yaml") {
		t.Errorf("findings %+v", r.Findings)
	}
}

func TestAuditChart(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"mesh.svg", "mesh.png"} {
		path := filepath.Join(dir, name)
		args := []string{"audit", "-chart", path, meshDir + "/mesh.yaml"}
		runCLI(t.Context(), args...).check(t, args, exitOK, []string{"Findings (6)"}, nil)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if name == "mesh.png" {
			if !strings.HasPrefix(string(b), "\x89PNG") {
				t.Errorf("%s is not a PNG", name)
			}
			continue
		}
		for _, want := range []string{"<svg", "27 attempts per request", "9 attempts per request", "×3  envoy", "×3  grpc", "×3  recoil", "no budget", "no deadline", "no jitter", "Liberation Sans"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
}

func TestAuditStrict(t *testing.T) {
	args := []string{"audit", "-strict", meshDir + "/mesh.yaml"}
	runCLI(t.Context(), args...).check(t, args, exitFailure, []string{"Findings (6)"}, []string{"recoil audit: -strict: 6 finding(s) in " + meshDir + "/mesh.yaml"})
	args = []string{"audit", "-strict", meshDir + "/mesh-budgeted.yaml"}
	runCLI(t.Context(), args...).check(t, args, exitOK, []string{"Findings: none"}, nil)
}

func TestAuditUsage(t *testing.T) {
	mesh := meshDir + "/mesh.yaml"
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"audit"}, "recoil audit: name a mesh file (see examples/mesh/mesh.yaml)"},
		{[]string{"audit", mesh, mesh}, mesh + " is a mesh file: audit it alone, or give configuration files to build the mesh from"},
		{[]string{"audit", "-in-flight", "0", mesh}, "-in-flight 0: must be between 1 and 1e9"},
		{[]string{"audit", "-sidecar-retries", "-1", mesh}, "-sidecar-retries -1: must be between 0 and 1000"},
		{[]string{"audit", "-inbound-retries", "-1", mesh}, "-inbound-retries -1: must be between 0 and 1000"},
		{[]string{"audit", "-failure-rate", "2", mesh}, "-failure-rate 200%: must be between 0 and 1 (0% to 100%)"},
		{[]string{"audit", "-failure-rate", "lots", mesh}, `invalid value "lots" for flag -failure-rate: want a fraction such as 0.2 or a percentage such as 20%`},
		{[]string{"audit", "-headroom", "0.5", mesh}, "-headroom 0.5: must be between 1 (no spare capacity) and 1e6"},
		{[]string{"audit", "-step", "0", mesh}, "-step 0: must be more than 0 and at most 1 (leave the flag out for its default)"},
		{[]string{"audit", "-chart", "mesh.txt", mesh}, "-chart mesh.txt: a chart's name ends in .svg or .png"},
		{[]string{"audit", "-chart", "/no/such/dir/m.svg", mesh}, "-chart /no/such/dir/m.svg: directory /no/such/dir does not exist"},
		{[]string{"audit", "-colour", mesh}, "flag provided but not defined: -colour"},
	}
	for _, tt := range tests {
		runCLI(t.Context(), tt.args...).usageErr(t, tt.args, tt.msg)
	}
}

// TestAuditBadInput: every bad mesh fails with a message naming the file
// and line, and no chart is written.
func TestAuditBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("p.yaml", "max_attempts: 3\n")
	tests := []struct {
		name, mesh, want string
	}{
		{"missing file", "", "recoil audit: open " + filepath.Join(dir, "absent.yaml") + ": no such file or directory"},
		{"broken YAML", "services: [a, b\nentries: [a]\n", "recoil audit: " + filepath.Join(dir, "broken YAML.yaml") + ":1: did not find expected ',' or ']'"},
		{"unknown edge kind", "services: [a, b]\nentries: [a]\nedges:\n  - {from: a, to: b, kind: linkerd, config: p.yaml}\n",
			"recoil audit: " + filepath.Join(dir, "unknown edge kind.yaml") + `:4: edges[0].kind: unknown edge kind "linkerd" (want one of envoy, grpc, istio, none, recoil)`},
		{"a cycle", "services: [a, b, c]\nentries: [a]\nedges:\n  - {from: a, to: b, kind: recoil, config: p.yaml}\n  - {from: b, to: c, kind: recoil, config: p.yaml}\n  - {from: c, to: b, kind: recoil, config: p.yaml}\n",
			"recoil audit: " + filepath.Join(dir, "a cycle.yaml") + ":6: edges[2]: a cycle: b → c → b — retries around a cycle have no bound"},
		{"a missing configuration", "services: [a, b]\nentries: [a]\nedges:\n  - {from: a, to: b, kind: envoy, config: envoy.yaml}\n",
			"recoil audit: " + filepath.Join(dir, "a missing configuration.yaml") + ":4: edges[0].config: cannot read " + filepath.Join(dir, "envoy.yaml") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "absent.yaml")
			if tt.mesh != "" {
				path = write(tt.name+".yaml", tt.mesh)
			}
			chart := filepath.Join(dir, "c.svg")
			args := []string{"audit", "-chart", chart, path}
			c := runCLI(t.Context(), args...)
			c.check(t, args, exitFailure, nil, []string{tt.want})
			if c.stdout != "" {
				t.Errorf("stdout: %s", c.stdout)
			}
			if _, err := os.Stat(chart); err == nil {
				t.Errorf("a chart was written for a mesh that could not be read")
			}
		})
	}
}

func TestAuditHelp(t *testing.T) {
	args := []string{"help", "audit"}
	runCLI(t.Context(), args...).check(t, args, exitOK, []string{"usage: recoil audit [flags] mesh.yaml", "-failure-rate", "-headroom", "-chart file", "Exit status:"}, nil)
}

// TestAuditDocs: the output docs/audit.md shows is the command's output
// today, for each shipped mesh (run from the repository's root).
func TestAuditDocs(t *testing.T) {
	t.Chdir("../../..")
	b, err := os.ReadFile("docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, mesh := range []string{"mesh.yaml", "mesh-budgeted.yaml", "hop.yaml"} {
		args := []string{"audit", "examples/mesh/" + mesh}
		c := runCLI(t.Context(), args...)
		if c.code != 0 {
			t.Fatalf("recoil %q: exit %d: %s", args, c.code, c.stderr)
		}
		out := c.stdout
		if mesh == "hop.yaml" { // the doc shows the entry's section
			i := strings.Index(out, "Entry ")
			out = strings.Join(strings.Split(out[i:], "\n")[:8], "\n") + "\n"
		}
		if !strings.Contains(doc, "```\n"+out+"```\n") {
			t.Errorf("docs/audit.md does not show the output of recoil audit examples/mesh/%s:\n%s", mesh, out)
		}
	}
}

// helmRender is what `helm template` prints for a chart with a
// Deployment, a Service, a VirtualService bound to a gateway and a
// DestinationRule: documents of several kinds, one empty.
const helmRender = `---
# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 2}
---
---
# Source: shop/templates/vs.yaml
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web}
spec:
  hosts: [shop.example.com]
  gateways: [istio-system/public]
  http:
    - match: [{uri: {prefix: /api}}]
      timeout: 5s
      retries: {attempts: 4, perTryTimeout: 2s, retryOn: "5xx,429"}
      route: [{destination: {host: web.shop.svc.cluster.local}}]
---
# Source: shop/templates/dr.yaml
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web}
spec:
  host: web.shop.svc.cluster.local
  trafficPolicy:
    connectionPool: {http: {maxRetries: 10}}
`

// TestAuditStdin: a render piped in is read as its tools read it, and the
// graph comes from the files: the gateway calls web, five attempts for a
// 503, a 500, a reset or a 429, ten retries in flight; 4 attempts of 2 s
// outrun the 5 s timeout. So are kubectl's JSON and kustomize's output;
// input with nothing to read, or that does not parse, is refused with why.
func TestAuditStdin(t *testing.T) {
	auditStdin = strings.NewReader(helmRender)
	t.Cleanup(func() { auditStdin = os.Stdin })
	args := []string{"audit", "-"}
	runCLI(t.Context(), args...).check(t, args, exitOK, []string{
		"recoil audit: mesh standard input",
		"public → web  istio         5  503,500,reset,429       ×1.1  10 in flight  5s, 2s per try",
		"web (leaf)      1            5 · 5 · 5 · 5           5",
		"standard input:18: timeout-cut: public → web: 5 attempts of up to 2s each, with their waits, take up to 10.525s, beyond the 5s timeout: a callee that times out gets 3 attempts, not 5",
	}, nil)
	for _, tt := range []struct {
		in     string
		code   int
		stdout []string
		stderr []string
	}{
		// kubectl get virtualservices -o json: a List in JSON.
		{`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "metadata": {"name": "web"},
  "spec": {"hosts": ["web"], "http": [{"route": [{"destination": {"host": "web"}}], "retries": {"attempts": 4, "retryOn": "5xx"}}]}}]}`,
			exitOK, []string{"clients of web → web  istio         5  503,500,reset"}, nil},
		// kustomize build: no leading ---, the kind quoted by a patch.
		{"apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\napiVersion: networking.istio.io/v1beta1\nkind: \"VirtualService\"\nmetadata: {name: web}\nspec:\n  hosts: [web]\n  http:\n  - route: [{destination: {host: web}}]\n",
			exitOK, []string{"clients of web → web  istio         3    reset"}, nil},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", exitFailure, nil,
			[]string{"recoil audit: standard input: no VirtualService route, Envoy route or gRPC methodConfig in the files"}},
		{"kind: VirtualService\nspec:\n  http: [\n", exitFailure, nil,
			[]string{"passed over, not YAML or JSON: standard input:3: did not find expected node content"}},
		{"", exitFailure, nil, []string{"recoil audit: standard input: no VirtualService route"}},
	} {
		auditStdin = strings.NewReader(tt.in)
		runCLI(t.Context(), args...).check(t, args, tt.code, tt.stdout, tt.stderr)
	}
}

// TestAuditDir: a directory's manifests make one graph; -sidecar-retry-on
// with 503 (Istio before 1.24) makes the default route retry a 503; a file
// that is not YAML is passed over with a word on standard error.
func TestAuditDir(t *testing.T) {
	dir := t.TempDir()
	for name, s := range map[string]string{
		"vs.yaml":    "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: api}\nspec:\n  hosts: [api]\n  http:\n    - route: [{destination: {host: api}}]\n",
		"notes.txt":  "not read",
		"other.json": `{"kind": "Service"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"audit", dir}
	runCLI(t.Context(), args...).check(t, args, exitOK, []string{"clients of api → api  istio         3    reset", "api (leaf)      1            1 · 1 · 3 · 1"}, nil)
	args = []string{"audit", "-sidecar-retry-on", "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes,503", dir}
	runCLI(t.Context(), args...).check(t, args, exitOK, []string{"api (leaf)      1            3 · 1 · 3 · 1"}, nil)
	// Manifests alone with no retry configuration are said to be so, not
	// read as a mesh file.
	cm := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: envoy}\ndata:\n  envoy.yaml: |\n    virtual_hosts: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args = []string{"audit", cm}
	runCLI(t.Context(), args...).check(t, args, exitFailure, nil, []string{"recoil audit: " + cm + ": no VirtualService route, Envoy route or gRPC methodConfig in the files"})
	// An unrendered template beside it is passed over, and said to be.
	if err := os.WriteFile(filepath.Join(dir, "tpl.yaml"), []byte("kind: VirtualService\nspec:\n  http:\n  {{- range .Routes }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args = []string{"audit", dir}
	runCLI(t.Context(), args...).check(t, args, exitOK, []string{"clients of api → api  istio         3    reset"},
		[]string{"recoil audit: passed over, not YAML or JSON: " + filepath.Join(dir, "tpl.yaml") + ":4: could not find expected ':'"})
}

// TestAuditInbound: a callee with an Istio sidecar retries a reset at its
// own app twice (Istio 1.24 on): the edges table and the chart show the
// inbound layer and a reset reaches the app 3 × 3 = 9 times; -inbound-retries 0 (Istio
// before 1.24, ENABLE_INBOUND_RETRY_POLICY=false) drops both.
func TestAuditInbound(t *testing.T) {
	dir := t.TempDir()
	for name, s := range map[string]string{
		"mesh.yaml": "services: [app, {name: backend, latency: 1s, sidecar: istio}]\nentries: [app]\nedges:\n  - {from: app, to: backend, kind: recoil, config: p.yaml}\n",
		"p.yaml":    "max_attempts: 3\nbudget: none\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mesh := filepath.Join(dir, "mesh.yaml")
	svg := filepath.Join(dir, "mesh.svg")
	args := []string{"audit", "-chart", svg, mesh}
	runCLI(t.Context(), args...).check(t, args, exitOK, []string{
		"+ backend's sidecar, inbound         3              reset         ×3",
		"backend (leaf)      1            3 · 3 · 9 · 3           9",
		"9 attempts reach backend for one request when everything fails (class reset)",
	}, nil)
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sidecar ×3 on its reset", "9 attempts per request"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	args = []string{"audit", "-inbound-retries", "0", mesh}
	r := runCLI(t.Context(), args...)
	r.check(t, args, exitOK, []string{"backend (leaf)      1            3 · 3 · 3 · 3           3"}, nil)
	if strings.Contains(r.stdout, "inbound") {
		t.Errorf("-inbound-retries 0 still shows an inbound layer:\n%s", r.stdout)
	}
}
