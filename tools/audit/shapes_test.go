package audit

import (
	"strings"
	"testing"
)

// TestReadShapes: each shape a tool accepts is read — the number of
// routes found and the first one's attempts and classes.
func TestReadShapes(t *testing.T) {
	tests := []struct {
		name, kind, data string
		routes, attempts int
		on               string
	}{
		{"one VirtualService then ---", KindIstio, "kind: VirtualService\nmetadata: {name: a}\nspec:\n  http:\n    - route: [{destination: {host: a}}]\n---\n", 1, 3, "reset"},
		{"a Gateway beside it, empty documents", KindIstio, "---\nkind: Gateway\nmetadata: {name: g}\nspec: {}\n---\n---\nkind: VirtualService\nmetadata: {name: a}\nspec:\n  http:\n    - retries: {attempts: 1, retryOn: \"503\"}\n      route: [{destination: {host: a}}]\n", 1, 2, "503"},
		{"a kubectl List", KindIstio, "apiVersion: v1\nkind: List\nitems:\n  - kind: VirtualService\n    metadata: {name: a}\n    spec: {http: [{route: [{destination: {host: a}}]}]}\n  - kind: VirtualServiceList\n    items:\n      - kind: VirtualService\n        metadata: {name: b}\n        spec: {http: [{route: [{destination: {host: b}}]}]}\n", 2, 3, "reset"},
		{"only a DestinationRule", KindIstio, "kind: DestinationRule\nmetadata: {name: a}\nspec: {host: a}\n", 0, 0, ""},
		{"envoy camelCase", KindEnvoy, "virtualHosts:\n  - routes:\n      - route: {cluster: c, retryPolicy: {retryOn: 5xx, numRetries: 2}}\n", 1, 3, "503,500,reset"},
		{"envoy mapping for a list of one", KindEnvoy, "static_resources:\n  listeners:\n    filter_chains:\n      filters:\n        typed_config:\n          route_config:\n            virtual_hosts:\n              routes:\n                route: {cluster: c, retry_policy: {retry_on: reset}}\n", 1, 2, "reset"},
		{"envoy xDS resources", KindEnvoy, "resources:\n- \"@type\": type.googleapis.com/envoy.config.route.v3.RouteConfiguration\n  name: r\n  virtual_hosts: [{name: v, routes: [{match: {prefix: /}, route: {cluster: c}}]}]\n", 1, 1, ""},
		{"envoy config dump", KindEnvoy, "configs:\n- dynamic_route_configs:\n  - route_config:\n      virtual_hosts: [{routes: [{route: {cluster: c, retry_policy: {retry_on: gateway-error, num_retries: 4}}}]}]\n- dynamic_active_clusters:\n  - cluster: {name: c, circuit_breakers: {thresholds: [{max_retries: 0}]}}\n", 1, 5, "503"},
		{"envoy JSON", KindEnvoy, `{"virtual_hosts": [{"routes": [{"route": {"cluster": "c"}}, {"route": {"cluster": "d"}}]}]}`, 2, 1, ""},
		{"grpc field names in any case", KindGRPC, `{"MethodConfig": [{"Name": [{"Service": "s"}], "RetryPolicy": {"maxattempts": 3, "INITIALBACKOFF": "0.1s", "MaxBackoff": "1s", "BackoffMultiplier": 2, "RetryableStatusCodes": ["RESOURCE_EXHAUSTED"]}}]}`, 1, 3, "429"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ReadConfig(tt.kind, "f", []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Routes) != tt.routes {
				t.Fatalf("%d routes, want %d", len(c.Routes), tt.routes)
			}
			if tt.routes == 0 {
				if len(c.Rules) != 1 {
					t.Errorf("rules %v, want one", c.Rules)
				}
				return
			}
			r := c.Routes[0].Retry
			if r.Attempts != tt.attempts || strings.Join(r.On, ",") != tt.on {
				t.Errorf("attempts %d on %v, want %d on %s", r.Attempts, r.On, tt.attempts, tt.on)
			}
		})
	}
}

// TestChooseUnnamed: routes without names are chosen by path, index or
// match, or by the callee they send to.
func TestChooseUnnamed(t *testing.T) {
	cfg := "virtual_hosts:\n  - routes:\n      - {match: {prefix: /service/1}, route: {cluster: service1, retry_policy: {retry_on: 5xx, num_retries: 1}}}\n      - {match: {prefix: /service/2}, route: {cluster: service2, retry_policy: {retry_on: 5xx, num_retries: 2}}}\n"
	for _, tt := range []struct {
		sel, to string
		want    int
	}{{"virtual_hosts[0].routes[1]", "x", 3}, {"0", "x", 2}, {"prefix /service/2", "x", 3}, {"", "service1", 2}, {"", "service2.prod.svc", 0}} {
		r, err := parseEnvoy("c", []byte(cfg), selector{name: tt.sel}, tt.to)
		if tt.want == 0 {
			if err == nil || !strings.Contains(err.Error(), "none of them to service2.prod.svc") {
				t.Errorf("%q to %s: %v, want none to it", tt.sel, tt.to, err)
			}
			continue
		}
		if err != nil || r.Attempts != tt.want {
			t.Errorf("%q to %s: %d attempts, %v; want %d", tt.sel, tt.to, r.Attempts, err, tt.want)
		}
	}
}
