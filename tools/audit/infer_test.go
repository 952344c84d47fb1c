package audit

import (
	"strings"
	"testing"
)

// TestConfigKind: the reader is chosen from what the documents hold, as
// kubectl, Helm and kustomize write them — a kind quoted or not, JSON as
// kubectl get -o json prints it, a List — and a Kubernetes resource of
// another kind is passed over even when a string in it holds an Envoy
// configuration.
func TestConfigKind(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"a VirtualService", "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a}\n", KindIstio},
		{"a quoted kind", "apiVersion: networking.istio.io/v1\nkind: \"VirtualService\"\nmetadata: {name: a}\n", KindIstio},
		{"kubectl get -o json", `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": {"host": "a"}}]}`, KindIstio},
		{"a Deployment, then a VirtualService", "apiVersion: apps/v1\nkind: Deployment\n---\napiVersion: networking.istio.io/v1\nkind: VirtualService\n", KindIstio},
		{"an Envoy bootstrap", "static_resources:\n  listeners:\n  - filter_chains: [{filters: [{typed_config: {route_config: {virtual_hosts: []}}}]}]\n", KindEnvoy},
		{"Envoy Gateway's list", "- name: l\n  virtualHosts: []\n", KindEnvoy},
		{"a service config", `{"methodConfig": []}`, KindGRPC},
		{"a service config, capitalised", `{"MethodConfig": []}`, KindGRPC},
		{"Envoy's configuration in a ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: envoy}\ndata:\n  envoy.yaml: |\n    static_resources:\n      virtual_hosts: []\n", ""},
		{"an EnvoyFilter", "apiVersion: networking.istio.io/v1alpha3\nkind: EnvoyFilter\nspec:\n  configPatches:\n  - patch: {value: {virtual_hosts: []}}\n", ""},
		{"a Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n", ""},
		{"methodConfig as YAML", "methodConfig: []\n", ""},
		{"kind in a comment", "# kind: VirtualService\napiVersion: v1\nkind: Service\n", ""},
		{"not YAML", "kind: VirtualService\nspec: [\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConfigKind([]byte(tt.data)); got != tt.want {
				t.Errorf("ConfigKind = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestInferPassesOver: files that hold no retry configuration are passed
// over; when none holds any, the error says so and names the first file
// that is not YAML or JSON at all, at its line; beside a route, such a file
// is listed in Mesh.Unread.
func TestInferPassesOver(t *testing.T) {
	tests := []struct {
		name  string
		files []File
		want  string // the error, or "" for a mesh
	}{
		{"manifests only", []File{{"d.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\n")}}, "in: no VirtualService route, Envoy route or gRPC methodConfig in the files: nothing names a call"},
		{"a broken file", []File{{"d.yaml", []byte("kind: Deployment\n")}, {"x.yaml", []byte("a: 1\nb: [\n")}}, "; passed over, not YAML or JSON: x.yaml:2: did not find expected node content"},
		{"binary", []File{{"b.yaml", []byte{0x80, 0x81, 0x82}}}, "passed over, not YAML or JSON: b.yaml: invalid leading UTF-8 octet"},
		{"a broken file beside a route", []File{{"x.yaml", []byte("b: [\n")}, {"vs.yaml", []byte("kind: VirtualService\nmetadata: {name: a}\nspec:\n  hosts: [a]\n  http: [{route: [{destination: {host: a}}]}]\n")}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Infer("in", tt.files, LoadOptions{})
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "" && len(m.Edges) != 1:
				t.Errorf("edges %v, want one", m.Edges)
			case tt.want == "" && strings.Join(m.Unread, "|") != "x.yaml:1: did not find expected node content":
				t.Errorf("unread %q, want the broken file at its line", m.Unread)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestIsManifest: Kubernetes resources, not a mesh file or a bare
// configuration.
func TestIsManifest(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{"apiVersion: v1\nkind: ConfigMap\n", true},
		{"---\n---\napiVersion: v1\nkind: List\nitems: [{apiVersion: apps/v1, kind: Deployment}]\n", true},
		{"services: [a]\nentries: [a]\nedges: []\n", false},
		{"kind: VirtualService\nspec: {}\n", false},
		{"virtual_hosts: []\n", false},
		{"a: [\n", false},
	}
	for _, tt := range tests {
		if got := IsManifest([]byte(tt.data)); got != tt.want {
			t.Errorf("IsManifest(%q) = %v, want %v", tt.data, got, tt.want)
		}
	}
}
