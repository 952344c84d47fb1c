package audit_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/recoil-go/recoil/tools/audit"
)

// The shipped mesh: an Envoy route, a gRPC service config and a recoil
// policy, each making three attempts, send 27 to the model API.
func ExampleAnalyze() {
	m, err := audit.Load("../../examples/mesh/mesh.yaml")
	if err != nil {
		panic(err)
	}
	r, err := audit.Analyze(m, audit.DefaultOptions())
	if err != nil {
		panic(err)
	}
	for _, s := range r.Entries[0].Services {
		fmt.Printf("%-9s worst case %2.0f, persistent failure tips at %.2f%%\n", s.Service, s.WorstCase, 100*s.PersistentTipping.Exact)
	}
	fmt.Println(len(r.Findings), "findings; the first:")
	fmt.Println(filepath.Base(r.Findings[0].At.File), r.Findings[0].At.Line, r.Findings[0].Check)
	// Output:
	// frontend  worst case  3, persistent failure tips at 10.00%
	// backend   worst case  9, persistent failure tips at 2.50%
	// model-api worst case 27, persistent failure tips at 0.77%
	// 6 findings; the first:
	// envoy-routes.yaml 12 no-budget
}

// Parse reads a mesh from memory; the opener supplies the configurations
// its edges name. A problem names the file and line.
func ExampleParse() {
	files := map[string]string{
		"vs.yaml": "kind: VirtualService\nspec:\n  http:\n    - retries: {attempts: 4, perTryTimeout: 2s}\n      timeout: 10s\n",
	}
	open := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	mesh := "services: [web, api]\nentries: [web]\nedges:\n  - {from: web, to: api, kind: istio, config: vs.yaml}\n"
	m, err := audit.Parse("mesh.yaml", []byte(mesh), open)
	if err != nil {
		panic(err)
	}
	e := m.Edges[0]
	fmt.Println(e.Name(), e.Retry.Attempts, "attempts, per try", e.Retry.PerTry, "at", e.Retry.PerTryAt)

	_, err = audit.Parse("mesh.yaml", []byte("services: [web]\nentries: [web]\nedges:\n  - {from: web, to: web, kind: none}\n"), open)
	fmt.Println(err)
	// Output:
	// web → api 5 attempts, per try 2s at vs.yaml:4
	// mesh.yaml:4: edges[0].to: a cycle: web calls itself, and retries around a cycle have no bound
}

// Load reads the mesh and the configurations it names, relative to it.
func ExampleLoad() {
	m, err := audit.Load("../../examples/mesh/hop.yaml")
	if err != nil {
		panic(err)
	}
	for _, e := range m.Edges {
		fmt.Println(e.Name(), e.Retry.Kind, e.Retry.Attempts, "hop", e.Retry.Hop)
	}
	// Output:
	// edge → a recoil 3 hop 2
	// a → b recoil 3 hop 0
	// b → model-api recoil 3 hop 0
}

// Columns lays a mesh out for a chart, entry points at the left.
func ExampleMesh_Columns() {
	m, err := audit.Load("testdata/fanout/mesh.yaml")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Columns())
	// Output:
	// [[gateway] [api] [search cache] [model cache-store]]
}

// ExampleInfer builds the graph from manifests alone — here a
// VirtualService bound to a gateway, as `helm template` prints it — and
// prints what one request sends for each failure class.
func ExampleInfer() {
	render := `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web}
spec:
  hosts: [shop.example.com]
  gateways: [istio-system/public]
  http:
    - route: [{destination: {host: web.shop.svc.cluster.local}}]
      retries: {attempts: 3, retryOn: "5xx"}
`
	m, err := audit.Infer("render", []audit.File{{Name: "render.yaml", Data: []byte(render)}}, audit.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := audit.Analyze(m, audit.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range r.Entries[0].Services {
		for _, c := range s.Classes {
			fmt.Printf("%s → %s, %-5s %v\n", r.Entries[0].Entry, s.Service, c.Class, c.WorstCase)
		}
	}
	// Output:
	// public → web, 503   4
	// public → web, 500   4
	// public → web, reset 4
	// public → web, 429   1
}
