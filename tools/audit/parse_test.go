package audit

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// edgeMesh is a mesh of one edge a → b of the given kind reading the
// configuration "c", with extra fields (route, method).
func edgeMesh(kind, extra string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf("services: [a, b]\nentries: [a]\nedges:\n  - {from: a, to: b, kind: %s, config: c%s}\n", kind, extra)
}

// TestParseErrors: every bad input is an *Error naming the file and line
// where it is, with words that say what to write instead.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, mesh, cfg, want string
	}{
		{"empty mesh", "", "", "m.yaml: the file is empty: want services, entries and edges"},
		{"broken YAML", "services: [a\n", "", "m.yaml:1: did not find expected ',' or ']'"},
		{"unknown field", "services: [a, b]\nentries: [a]\nedge:\n  - {from: a, to: b, kind: none}\n", "", `m.yaml:3: edge: unknown field "edge" (want one of edges, entries, name, services, sidecars)`},
		{"a configuration, not a mesh", "# routes\nvirtual_hosts: []\n", "", "m.yaml:2: this looks like an Envoy route configuration, not a mesh: a mesh file lists services, entries and edges, and names such a file in an edge's config, or give the configuration files to recoil audit to build the mesh from them (see docs/audit.md)"},
		{"unknown kind", edgeMesh("consul", ""), "", `m.yaml:4: edges[0].kind: unknown edge kind "consul" (want one of envoy, grpc, istio, none, recoil)`},
		{"missing kind", "services: [a, b]\nentries: [a]\nedges:\n  - {from: a, to: b}\n", "", "m.yaml:4: edges[0].kind: missing: want one of envoy, grpc, istio, none, recoil"},
		{"cycle", "services: [a, b, c]\nentries: [a]\nedges:\n  - {from: a, to: b, kind: none}\n  - {from: b, to: c, kind: none}\n  - {from: c, to: a, kind: none}\n", "",
			"m.yaml:6: edges[2]: a cycle: a → b → c → a — retries around a cycle have no bound"},
		{"self loop", "services: [a]\nentries: [a]\nedges:\n  - {from: a, to: a, kind: none}\n", "", "m.yaml:4: edges[0].to: a cycle: a calls itself, and retries around a cycle have no bound"},
		{"unknown service", "services: [a, b]\nentries: [a]\nedges:\n  - {from: a, to: c, kind: none}\n", "", `m.yaml:4: edges[0].to: "c" is not a service (the services are a, b)`},
		{"service twice", "services: [a, b, a]\nentries: [a]\nedges: []\n", "", `m.yaml:1: services[2]: service "a" is listed twice (first on line 1)`},
		{"unknown entry", "services: [a, b]\nentries: [x]\nedges: []\n", "", `m.yaml:2: entries[0]: "x" is not a service (the services are a, b)`},
		{"no entries", "services: [a, b]\nedges: []\n", "", "m.yaml:1: entries: missing: name the services requests arrive at"},
		{"no edges", "services: [a, b]\nentries: [a]\n", "", "m.yaml:1: edges: missing: list the calls between services"},
		{"route on grpc", edgeMesh("grpc", "route: r"), "", "m.yaml:4: edges[0].route: chooses an Envoy or Istio route; an edge of kind grpc has none (use method for gRPC)"},
		{"config on none", edgeMesh("none", ""), "", "m.yaml:4: edges[0].config: an edge of kind none reads no configuration"},
		{"missing config file", strings.Replace(edgeMesh("recoil", ""), "config: c", "config: gone.yaml", 1), "", "m.yaml:4: edges[0].config: cannot read gone.yaml: file does not exist"},
		{"negative latency", "services: [{name: a, latency: -1s}]\nentries: [a]\nedges: []\n", "", "m.yaml:1: services[0].latency: must be 0 to 24h0m0s"},

		{"envoy no such route", edgeMesh("envoy", "route: r"), "virtual_hosts:\n  - routes:\n      - name: x\n        route: {cluster: c}\n", `m.yaml:4: edges[0].route: c has no route "r" (it has "x")`},
		{"envoy which route", edgeMesh("envoy", ""), "virtual_hosts:\n  - routes:\n      - {name: x, route: {cluster: c}}\n      - {name: y, route: {cluster: c}}\n", `m.yaml:4: edges[0].route: c has 2 routes, none of them to b ("x", "y"): name one with route`},
		{"envoy negative retries", edgeMesh("envoy", ""), "virtual_hosts:\n  - routes:\n      - name: x\n        route: {cluster: c, retry_policy: {num_retries: -1}}\n", "c:4: virtual_hosts[0].routes[0].route.retry_policy.num_retries: -1 is out of range: want 0 to 1000"},
		{"envoy go duration", edgeMesh("envoy", ""), "virtual_hosts:\n  - routes:\n      - name: x\n        route: {cluster: c, retry_policy: {per_try_timeout: 250ms}}\n", `c:4: virtual_hosts[0].routes[0].route.retry_policy.per_try_timeout: want a duration in seconds such as 0.25s or 2s, got "250ms"`},
		{"envoy back-off without base", edgeMesh("envoy", ""), "virtual_hosts:\n  - routes:\n      - name: x\n        route: {cluster: c, retry_policy: {retry_back_off: {max_interval: 1s}}}\n", "c:4: virtual_hosts[0].routes[0].route.retry_policy.retry_back_off.base_interval: missing: Envoy requires it"},
		{"envoy max below base", edgeMesh("envoy", ""), "virtual_hosts:\n  - routes:\n      - name: x\n        route: {cluster: c, retry_policy: {retry_back_off: {base_interval: 1s, max_interval: 0.5s}}}\n", "c:4: virtual_hosts[0].routes[0].route.retry_policy.retry_back_off.max_interval: must be at least base_interval (1s)"},
		{"envoy no routes", edgeMesh("envoy", ""), "listeners: []\n", "c:1: no routes: want a RouteConfiguration (virtual_hosts) or a bootstrap whose listeners hold a route_config"},
		{"envoy redirect", edgeMesh("envoy", ""), "virtual_hosts:\n  - routes:\n      - name: x\n        redirect: {path_redirect: /}\n", "c:3: virtual_hosts[0].routes[0]: the route has no route action (a redirect or a direct response calls nothing)"},
		{"envoy budget percent", edgeMesh("envoy", ""), "static_resources:\n  listeners:\n    - filter_chains:\n        - filters:\n            - typed_config:\n                route_config:\n                  virtual_hosts:\n                    - routes:\n                        - route: {cluster: k, retry_policy: {}}\n  clusters:\n    - name: k\n      circuit_breakers:\n        thresholds:\n          - retry_budget: {budget_percent: {value: 120}}\n",
			"c:14: cluster k.circuit_breakers.thresholds[0].retry_budget.budget_percent: 120 is out of range: want 0 to 100"},
		{"envoy empty", edgeMesh("envoy", ""), "# nothing\n", "c: the file is empty"},

		{"grpc one attempt", edgeMesh("grpc", ""), `{"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": {"maxAttempts": 1}}]}`, "c:1: methodConfig[0].retryPolicy.maxAttempts: 1: must be at least 2 (gRPC refuses the service config)"},
		{"grpc no codes", edgeMesh("grpc", ""), "{\"methodConfig\": [{\"name\": [{\"service\": \"s\"}], \"retryPolicy\": {\"maxAttempts\": 3,\n \"initialBackoff\": \"1s\", \"maxBackoff\": \"2s\", \"backoffMultiplier\": 2}}]}", "c:1: methodConfig[0].retryPolicy.retryableStatusCodes: missing: gRPC requires at least one status code"},
		{"grpc ms duration", edgeMesh("grpc", ""), "{\"methodConfig\": [{\"name\": [{\"service\": \"s\"}],\n \"retryPolicy\": {\"maxAttempts\": 3,\n \"initialBackoff\": \"100ms\"}}]}", `c:3: methodConfig[0].retryPolicy.initialBackoff: want a duration in seconds such as 0.25s or 2s, got "100ms"`},
		{"grpc both policies", edgeMesh("grpc", ""), "{\"methodConfig\": [{\"retryPolicy\": {},\n \"hedgingPolicy\": {}}]}", "c:2: methodConfig[0].hedgingPolicy: a methodConfig has a retryPolicy or a hedgingPolicy, not both (gRPC refuses the service config)"},
		{"grpc truncated", edgeMesh("grpc", ""), "{\"methodConfig\": [\n", "c:1: the JSON ends before it is complete"},
		{"grpc duplicate key", edgeMesh("grpc", ""), "{\"a\": 1,\n \"a\": 2}", "c:2: a: given twice (first on line 1)"},
		{"grpc two documents", edgeMesh("grpc", ""), "{}\n{}", "c:2: more after the JSON document ends"},
		{"grpc syntax", edgeMesh("grpc", ""), "{\n \"methodConfig\": [,]}", "c:2: invalid character ',' looking for beginning of value"},
		{"grpc no such method", edgeMesh("grpc", "method: t.S/M"), `{"methodConfig": [{"name": [{"service": "s"}, {"service": "u", "method": "M"}]}]}`, `m.yaml:4: edges[0].method: no methodConfig of c applies to "t.S/M" (it names s, u/M)`},
		{"grpc which method", edgeMesh("grpc", ""), `{"methodConfig": [{"name": [{"service": "s"}]}, {"name": [{"service": "u"}]}]}`, "m.yaml:4: edges[0].method: c has 2 methodConfigs and no default: name a method (package.Service/Method) with method"},
		{"grpc throttling", edgeMesh("grpc", ""), `{"retryThrottling": {"maxTokens": 0, "tokenRatio": 0.1}}`, "c:1: retryThrottling.maxTokens: must be greater than zero"},
		{"grpc not an object", edgeMesh("grpc", ""), "[1, 2]", "c:1: want a mapping, got a list"},
		{"grpc empty", edgeMesh("grpc", ""), " \n", "c: the file is empty"},

		{"istio kind", edgeMesh("istio", ""), "kind: DestinationRule\nspec: {}\n", `m.yaml:4: edges[0].route: c has no routes to choose from`},
		{"istio bare number", edgeMesh("istio", ""), "spec:\n  http:\n    - retries: {attempts: 2, perTryTimeout: 2}\n", `c:3: spec.http[0].retries.perTryTimeout: want a duration such as 500ms or 2s, got "2"`},
		{"istio no attempts", edgeMesh("istio", ""), "spec:\n  http:\n    - retries: {perTryTimeout: 2s}\n", "c:3: spec.http[0].retries.attempts: missing: Istio requires it in retries"},
		{"istio no such route", edgeMesh("istio", "route: nope"), "spec:\n  http:\n    - name: a\n", `m.yaml:4: edges[0].route: c has no route "nope" (it has "a")`},
		{"istio no spec", edgeMesh("istio", ""), "kind: VirtualService\n", "c:1: spec: missing: a VirtualService's routes are in spec.http"},
		{"envoy rate-limited back-off without reset headers", edgeMesh("envoy", ""), "virtual_hosts:\n  - routes:\n      - route:\n          cluster: b\n          retry_policy:\n            retry_on: 5xx\n            rate_limited_retry_back_off: {max_interval: 10s}\n", "c:7: virtual_hosts[0].routes[0].route.retry_policy.rate_limited_retry_back_off.reset_headers: missing: Envoy requires at least one (name: Retry-After, format: SECONDS)"},
		{"istio retry budget above 100%", edgeMesh("istio", ""), "kind: DestinationRule\nspec:\n  host: b\n  trafficPolicy:\n    retryBudget: {percent: 150}\n", "c:5: spec.trafficPolicy.retryBudget.percent: 150 is out of range: want 0 to 100"},
		{"istio subset maxRetries", edgeMesh("istio", ""), "kind: DestinationRule\nspec:\n  host: b\n  subsets:\n  - name: v1\n    trafficPolicy: {connectionPool: {http: {maxRetries: lots}}}\n", `c:6: spec.subsets[0].trafficPolicy.connectionPool.http.maxRetries: want a whole number, got "lots"`},
		{"istio port number", edgeMesh("istio", ""), "kind: DestinationRule\nspec:\n  host: b\n  trafficPolicy:\n    portLevelSettings:\n    - port: {number: http}\n", `c:6: spec.trafficPolicy.portLevelSettings[0].port.number: want a port number, got "http"`},

		{"recoil negative", edgeMesh("recoil", ""), "max_attempts: -1\n", "c:1: max_attempts: must not be negative (0 means recoil's default, 3)"},
		{"recoil renamed", edgeMesh("recoil", ""), "attempts: 3\n", `c:1: attempts: "attempts" is now spelled max_attempts (see docs/policy-language.md)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("m.yaml", []byte(tt.mesh), mapOpener(map[string]string{"c": tt.cfg}))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v (%T), want an *Error", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

// TestEnvoyRead: Envoy's defaults and the forms its YAML takes.
func TestEnvoyRead(t *testing.T) {
	route := func(action string) string {
		return "virtual_hosts:\n  - name: v\n    retry_policy: {num_retries: 4, retry_on: 5xx}\n    routes:\n      - name: x\n        route: " + action + "\n"
	}
	tests := []struct {
		name, cfg string
		attempts  int
		waits     string
		timeout   time.Duration
		perTry    time.Duration
		defaultTO bool
	}{
		{"no retry policy: the virtual host's", route("{cluster: c}"), 5, "[25ms 75ms 175ms 250ms]", 15 * time.Second, 0, true},
		{"num_retries defaults to 1", route("{cluster: c, retry_policy: {retry_on: 5xx}}"), 2, "[25ms]", 15 * time.Second, 0, true},
		{"a UInt32Value written out", route("{cluster: c, retry_policy: {retry_on: reset, num_retries: {value: 2}}}"), 3, "[25ms 75ms]", 15 * time.Second, 0, true},
		{"seconds and nanos", route("{cluster: c, timeout: {seconds: 3, nanos: 500000000}, retry_policy: {retry_on: 5xx, num_retries: 1, per_try_timeout: 1.5s}}"), 2, "[25ms]", 3500 * time.Millisecond, 1500 * time.Millisecond, false},
		{"back-off capped", route("{cluster: c, retry_policy: {retry_on: 5xx, num_retries: 3, retry_back_off: {base_interval: 0.1s, max_interval: 0.2s}}}"), 4, "[100ms 200ms 200ms]", 15 * time.Second, 0, true},
		{"timeout off", route("{cluster: c, timeout: 0s, retry_policy: {retry_on: 5xx, num_retries: 0}}"), 1, "[]", 0, 0, false},
		{"no retry_on: nothing is retried", route("{cluster: c, retry_policy: {num_retries: 3}}"), 1, "[]", 15 * time.Second, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseEnvoy("c", []byte(tt.cfg), selector{name: "x"}, "b")
			if err != nil {
				t.Fatal(err)
			}
			if r.Attempts != tt.attempts || fmt.Sprint(r.Waits) != tt.waits || r.Timeout != tt.timeout || r.PerTry != tt.perTry || r.TimeoutDefault != tt.defaultTO {
				t.Errorf("attempts %d waits %v timeout %v per try %v default %v; want %d %s %v %v %v",
					r.Attempts, r.Waits, r.Timeout, r.PerTry, r.TimeoutDefault, tt.attempts, tt.waits, tt.timeout, tt.perTry, tt.defaultTO)
			}
			if !r.Jitter || r.Budget.Kind != "" {
				t.Errorf("jitter %v budget %+v: Envoy's back-off is jittered, and there is no cluster", r.Jitter, r.Budget)
			}
		})
	}
	// The timeout turned off is a finding.
	r, _ := parseEnvoy("c", []byte(route("{cluster: c, timeout: 0s}")), selector{name: "x"}, "b")
	fs := findings(&Edge{From: "a", To: "b", Retry: r})
	if got := findingKeys(fs); fmt.Sprint(got) != "[c:3 no-budget a → b c:6 no-deadline a → b]" {
		t.Errorf("findings %v", got)
	}
}

// TestIstioRead: with no retries field Istio retries twice.
func TestIstioRead(t *testing.T) {
	r, err := parseIstio("vs", []byte("spec:\n  http:\n    - name: a\n      route: [{destination: {host: a}}]\n"), selector{}, "a", SidecarDefault{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 3 || r.AttemptsAt != (Source{}) || r.Timeout != 0 || !r.Jitter || fmt.Sprint(r.Waits) != "[25ms 75ms]" {
		t.Errorf("defaults: %+v", r)
	}
	r, err = parseIstio("vs", []byte("spec:\n  http:\n    - retries: {attempts: 0}\n      timeout: 1s\n"), selector{}, "a", SidecarDefault{})
	if err != nil || r.Attempts != 1 || r.Timeout != time.Second || r.AttemptsAt.Line != 3 {
		t.Errorf("attempts 0: %+v, %v", r, err)
	}
}

// TestGRPCSelect: a method's own entry, else its service's, else the
// default.
func TestGRPCSelect(t *testing.T) {
	cfg := `{"methodConfig": [
  {"name": [{}], "timeout": "1s"},
  {"name": [{"service": "s"}], "timeout": "2s"},
  {"name": [{"service": "s", "method": "M"}], "timeout": "3s"}
]}`
	for _, tt := range []struct {
		method string
		want   time.Duration
		line   int
	}{{"s/M", 3 * time.Second, 4}, {"s/N", 2 * time.Second, 3}, {"s", 2 * time.Second, 3}, {"t/M", time.Second, 2}, {"", time.Second, 2}} {
		r, err := parseGRPC("g.json", []byte(cfg), selector{name: tt.method})
		if err != nil {
			t.Fatalf("%q: %v", tt.method, err)
		}
		if r.Timeout != tt.want || r.TimeoutAt.Line != tt.line {
			t.Errorf("%q: timeout %v at line %d, want %v at %d", tt.method, r.Timeout, r.TimeoutAt.Line, tt.want, tt.line)
		}
	}
}

// TestReadJSON: every value carries its line.
func TestReadJSON(t *testing.T) {
	n, err := readJSON("x.json", []byte("{\n  \"a\": [\n    1,\n    {\"b\": true}\n  ],\n  \"c\": null\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := n.Content[1]
	if n.Line != 1 || n.Content[0].Line != 2 || a.Content[0].Line != 3 || a.Content[1].Line != 4 || n.Content[2].Line != 6 {
		t.Errorf("lines: root %d, a %d, 1 %d, {b} %d, c %d", n.Line, n.Content[0].Line, a.Content[0].Line, a.Content[1].Line, n.Content[2].Line)
	}
}

// TestRecoilWaits: a recoil policy's waits follow its classify mode: by
// default the longer of the backoff and the overload backoff (the policy's
// own, or recoil's from 1 s), and a Retry-After up to max_server_wait plus
// the tenth more, at most a second, that recoil adds; under
// retry-everything the backoff alone and no Retry-After; under timeouts no
// answer is retried.
func TestRecoilWaits(t *testing.T) {
	tests := []struct {
		name, policy string
		waits        string
		server       time.Duration
		on           string
	}{
		{"recoil's defaults", "max_attempts: 3\n", "[1s 2s]", 61 * time.Second, "503,500,reset,429"},
		{"an overload backoff of its own", "max_attempts: 3\noverload_backoff: {kind: exponential, base: 5s}\n", "[5s 10s]", 61 * time.Second, "503,500,reset,429"},
		{"a backoff longer than the overload one", "max_attempts: 3\nbackoff: {kind: constant, base: 3s}\n", "[3s 3s]", 61 * time.Second, "503,500,reset,429"},
		{"max_server_wait 10s", "max_attempts: 2\nmax_server_wait: 10s\n", "[1s]", 11 * time.Second, "503,500,reset,429"},
		{"max_server_wait 5s", "max_attempts: 2\nmax_server_wait: 5s\n", "[1s]", 5500 * time.Millisecond, "503,500,reset,429"},
		{"retry-everything ignores both", "max_attempts: 3\nclassify: retry-everything\noverload_backoff: {kind: exponential, base: 5s}\nmax_server_wait: 10s\n", "[100ms 200ms]", 0, "503,500,reset,429"},
		{"timeouts retries no answer", "max_attempts: 3\nclassify: timeouts\n", "[100ms 200ms]", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseRecoil("p.yaml", []byte(tt.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(r.Waits); got != tt.waits || r.ServerWait != tt.server || strings.Join(r.On, ",") != tt.on {
				t.Errorf("waits %s, server wait %v, on %v; want %s, %v, %s", got, r.ServerWait, r.On, tt.waits, tt.server, tt.on)
			}
		})
	}
}
