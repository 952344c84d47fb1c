package audit

import (
	"strings"
	"testing"
	"time"
)

// chain is a call graph written the way real configurations write it,
// with every figure the audit prints for its leaf worked out by hand.
type chain struct {
	name  string
	mesh  string
	files map[string]string
	lo    LoadOptions
	leaf  string
	// byClass is the leaf's worst case for 503, 500, reset and 429.
	byClass [4]float64
	// sustained is the worst class's attempts once budgets have drained.
	sustained float64
	hold      time.Duration
	findings  []string // checks, in order
	// above are the worst cases at services above the leaf, if checked.
	above map[string]float64
}

// TestChains: fifteen chains shaped like the real files the audit is scored
// on (testdata/realfiles), each figure checked against the arithmetic in
// its comment.
func TestChains(t *testing.T) {
	for _, c := range chains {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseWith("m.yaml", []byte(c.mesh), mapOpener(c.files), c.lo)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Analyze(m, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			s := reachOf(t, r.Entries[0], c.leaf)
			var got [4]float64
			for i, cr := range s.Classes {
				got[i] = cr.WorstCase
			}
			if got != c.byClass {
				t.Errorf("%s by class (503 500 reset 429) = %v, want %v", c.leaf, got, c.byClass)
			}
			if !near(s.Sustained, c.sustained) {
				t.Errorf("%s sustained = %v, want %v", c.leaf, s.Sustained, c.sustained)
			}
			for svc, want := range c.above {
				if got := reachOf(t, r.Entries[0], svc).WorstCase; got != want {
					t.Errorf("%s worst case = %v, want %v", svc, got, want)
				}
			}
			if h := r.Entries[0].Hold; h.Duration != c.hold {
				t.Errorf("hold = %v (%s), want %v", h.Duration, h.BoundBy, c.hold)
			}
			var checks []string
			for _, f := range r.Findings {
				checks = append(checks, f.Check)
			}
			if strings.Join(checks, " ") != strings.Join(c.findings, " ") {
				t.Errorf("findings %v, want %v", findingKeys(r.Findings), c.findings)
			}
		})
	}
}

var chains = []chain{
	{
		// Istio sidecars with no VirtualService under an app that retries
		// (bookinfo's shape: the gateway's VirtualService sets no retries,
		// nor does any other): the gateway's route retries twice on a
		// reset (Istio's default), the frontend's code makes 4 attempts at
		// the backend (recoil's default classification retries every
		// class), and the frontend's sidecar retries each of them twice
		// more. Reset: 3 × 4 × 3 = 36, where counting the app alone says
		// 3 × 4 = 12. Since Istio 1.24 a 503 is not in the default: 1 × 4 ×
		// 1 = 4; a 500 and a 429 likewise 4. Sustained, the worst class
		// (reset) has no budget on the sidecars: 3 × 1.1 (the policy's
		// ratio budget) × 3 = 9.9. Hold: the app's 4 attempts, each cut at
		// its 1 s attempt_timeout (the sidecar's 3 tries of the backend's
		// 2 s would take 6.1 s), and its waits of up to 60 s (Retry-After)
		// come to more than its 8 s timeout, which bounds them; the
		// gateway route has no timeout: 3 × 8 s + 25 ms + 75 ms = 24.1 s.
		// The app's attempts overrun its timeout: 1 s, a wait of ≤ 1 s,
		// 1 s, ≤ 2 s, 1 s, ≤ 4 s: the fourth would start at 10 s > 8 s.
		name: "istio sidecars under app retries: 36, not 12",
		mesh: `sidecars: istio
services: [gateway, frontend, {name: backend, latency: 2s}]
entries: [gateway]
edges:
  - {from: gateway, to: frontend, kind: istio, config: gw-vs.yaml}
  - {from: frontend, to: backend, kind: recoil, config: app.yaml}
`,
		files: map[string]string{
			"gw-vs.yaml": "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: bookinfo}\nspec:\n  hosts: [\"*\"]\n  gateways: [bookinfo-gateway]\n  http:\n    - match: [{uri: {exact: /productpage}}]\n      route: [{destination: {host: frontend, port: {number: 9080}}}]\n",
			"app.yaml":   "max_attempts: 4\nattempt_timeout: 1s\ntimeout: 8s\nbudget: {kind: ratio, percent: 10%}\n",
		},
		leaf: "backend", byClass: [4]float64{4, 4, 36, 4}, sustained: 9.9, hold: 24100 * time.Millisecond,
		findings: []string{CheckBudget, CheckDeadline, CheckTimeouts, CheckBudget, CheckDeadline},
	},
	{
		// The same chain under Istio before 1.24, whose default retried a
		// 503 too and whose sidecars retried nothing inbound (1.23 had it
		// behind ENABLE_INBOUND_RETRY_POLICY, off): 503 becomes 3 × 4 × 3 =
		// 36, the rest as before.
		name: "istio before 1.24 retries 503 by default",
		mesh: "sidecars: istio\nservices: [gateway, frontend, {name: backend, latency: 2s}]\nentries: [gateway]\nedges:\n  - {from: gateway, to: frontend, kind: istio, config: gw-vs.yaml}\n  - {from: frontend, to: backend, kind: recoil, config: app.yaml}\n",
		files: map[string]string{
			"gw-vs.yaml": "kind: VirtualService\nmetadata: {name: gw}\nspec:\n  hosts: [\"*\"]\n  http:\n    - route: [{destination: {host: frontend}}]\n",
			"app.yaml":   "max_attempts: 4\nattempt_timeout: 1s\ntimeout: 8s\nbudget: {kind: ratio, percent: 10%}\n",
		},
		lo:   LoadOptions{Sidecar: SidecarDefault{Retries: 2, RetryOn: "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes,503"}, Inbound: InboundDefault{Off: true}},
		leaf: "backend", byClass: [4]float64{36, 4, 36, 4}, sustained: 9.9, hold: 24100 * time.Millisecond,
		findings: []string{CheckBudget, CheckDeadline, CheckTimeouts, CheckBudget, CheckDeadline},
	},
	{
		// The same chain under Istio 1.24 or later with the 503 put back
		// in the outbound default (EXCLUDE_UNSAFE_503_FROM_DEFAULT_RETRY=
		// false) and the inbound retry policy on, as 1.24 ships it: the
		// backend's app resets a connection its sidecar had kept alive,
		// the backend's sidecar tries it 3 times (2 retries on
		// reset-before-request) and answers the frontend's sidecar with a
		// 503, which it and the gateway's route now retry. Reset: 3 × 4 ×
		// 3 × 3 = 108 (the pod gone instead: 3 × 4 × 3 = 36, fewer).
		// Sustained: 3 × 1.1 × 3 × 3 = 29.7. The 503, 500 and 429 as in
		// the chain before: the inbound route retries none of them.
		name: "istio 1.24 with 503 back in the default: the inbound retries make 108",
		mesh: "sidecars: istio\nservices: [gateway, frontend, {name: backend, latency: 2s}]\nentries: [gateway]\nedges:\n  - {from: gateway, to: frontend, kind: istio, config: gw-vs.yaml}\n  - {from: frontend, to: backend, kind: recoil, config: app.yaml}\n",
		files: map[string]string{
			"gw-vs.yaml": "kind: VirtualService\nmetadata: {name: gw}\nspec:\n  hosts: [\"*\"]\n  http:\n    - route: [{destination: {host: frontend}}]\n",
			"app.yaml":   "max_attempts: 4\nattempt_timeout: 1s\ntimeout: 8s\nbudget: {kind: ratio, percent: 10%}\n",
		},
		lo:   LoadOptions{Sidecar: SidecarDefault{Retries: 2, RetryOn: "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes,503"}},
		leaf: "backend", byClass: [4]float64{36, 4, 108, 4}, sustained: 29.7, hold: 24100 * time.Millisecond,
		findings: []string{CheckBudget, CheckDeadline, CheckTimeouts, CheckBudget, CheckDeadline},
	},
	{
		// Only the callee runs an Istio sidecar (1.24's defaults): a
		// recoil client making 3 attempts at it over HTTP. When the
		// backend's app refuses or resets a connection before the
		// request reaches it, its sidecar tries twice more and answers
		// the client with a 503, which the client retries (recoil's
		// default classification retries a 503): 3 × 3 = 9 reach the app.
		// With the pod gone the client sees the reset itself: 3. The
		// 503, 500 and 429 come from the app and pass the sidecar as they
		// are: 3 each. Sustained: no budget, 9. Hold: 3 attempts of 1 s
		// and waits of up to 61 s each (a Retry-After of up to 60 s and
		// recoil's tenth more, at most a second): 125 s, nothing bounding
		// it; the inbound retries add no time to a call that hangs (a
		// hung app has had the request, which reset-before-request does
		// not retry).
		name:  "a sidecar's inbound retries under a client's: 9, not 3",
		mesh:  "services: [app, {name: backend, latency: 1s, sidecar: istio}]\nentries: [app]\nedges:\n  - {from: app, to: backend, kind: recoil, config: p.yaml}\n",
		files: map[string]string{"p.yaml": "max_attempts: 3\nbudget: none\n"},
		leaf:  "backend", byClass: [4]float64{3, 3, 9, 3}, sustained: 9, hold: 125 * time.Second,
		findings: []string{CheckBudget, CheckDeadline},
	},
	{
		// An Envoy route retrying gateway-error twice (a 502, 503 or 504;
		// not a reset) in front of a service with an Istio sidecar. The
		// app resets behind its live sidecar: the sidecar tries it 3 times
		// and answers Envoy with a 503, which Envoy retries: 3 × 3 = 9
		// (with the pod gone Envoy sees the reset, which it does not
		// retry: 1). A 503 from the app: 3; a 500 or a 429: 1. Sustained:
		// the file holds no cluster, so no cap is known: 9. Hold: 3
		// attempts of 1 s and Envoy's waits of up to 25 and 75 ms: 3.1 s,
		// inside the default 15 s route timeout.
		name: "envoy retrying gateway errors over a sidecar that retries inbound: 9",
		mesh: "services: [edge, {name: backend, latency: 1s, sidecar: istio}]\nentries: [edge]\nedges:\n  - {from: edge, to: backend, kind: envoy, config: envoy.yaml}\n",
		files: map[string]string{
			"envoy.yaml": "virtual_hosts:\n- name: v\n  domains: [\"*\"]\n  routes:\n  - match: {prefix: /}\n    route:\n      cluster: backend\n      retry_policy: {retry_on: gateway-error, num_retries: 2}\n",
		},
		leaf: "backend", byClass: [4]float64{3, 1, 9, 1}, sustained: 9, hold: 3100 * time.Millisecond,
		findings: []string{CheckBudget},
	},
	{
		// The same over gRPC: Istio gives a gRPC port's inbound route no
		// retry policy, so a reset reaches the app once per attempt: 3.
		name:  "no inbound retries on a gRPC port",
		mesh:  "services: [app, {name: backend, latency: 1s, sidecar: istio}]\nentries: [app]\nedges:\n  - {from: app, to: backend, kind: grpc, config: sc.json}\n",
		files: map[string]string{"sc.json": `{"methodConfig": [{"name": [{}], "timeout": "10s", "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`},
		leaf:  "backend", byClass: [4]float64{3, 1, 3, 1}, sustained: 3, hold: 3300 * time.Millisecond,
		findings: []string{CheckBudget},
	},
	{
		// An Envoy route retrying only the status codes it lists
		// (retriable-status-codes with retriable_status_codes: [503], as
		// Envoy's docs write it) in front of a gRPC client configured as
		// grpc-go's retry example is, field names capitalised: MaxAttempts
		// 4 on UNAVAILABLE. 503: 4 × 4 = 16; a reset is UNAVAILABLE to the
		// gRPC client: 1 × 4 = 4; a 500 and a 429 are retried by neither:
		// 1. Envoy's cluster is in the file with max_retries: 5, so once
		// the failure lasts at 100 calls in flight its retries are 5 %
		// of them: 1.05 × 4 (no throttling) = 4.2 sustained for 503.
		// Hold: the gRPC edge's 4 attempts of the backend's 1 s and its 3
		// waits of ≤ 10 ms, no timeout: 4.03 s; each Envoy attempt is cut
		// at its 2 s per-try timeout: 4 × 2 s + 25 + 75 + 175 ms = 8.275 s,
		// under the 15 s default route timeout.
		name: "envoy status codes over grpc-go's capitalised retry policy",
		mesh: "services: [edge, api, {name: backend, latency: 1s}]\nentries: [edge]\nedges:\n  - {from: edge, to: api, kind: envoy, config: envoy.yaml}\n  - {from: api, to: backend, kind: grpc, config: sc.json, method: grpc.examples.echo.Echo/UnaryEcho}\n",
		files: map[string]string{
			"envoy.yaml": "static_resources:\n  listeners:\n  - name: l\n    filter_chains:\n    - filters:\n      - name: envoy.filters.network.http_connection_manager\n        typed_config:\n          route_config:\n            virtual_hosts:\n            - name: v\n              domains: [\"*\"]\n              routes:\n              - match: {prefix: /}\n                route:\n                  cluster: api\n                  retry_policy:\n                    retry_on: retriable-status-codes\n                    retriable_status_codes: [503]\n                    num_retries: 3\n                    per_try_timeout: 2s\n  clusters:\n  - name: api\n    circuit_breakers:\n      thresholds:\n      - max_retries: 5\n",
			"sc.json": `{"methodConfig": [{"name": [{"service": "grpc.examples.echo.Echo"}], "waitForReady": true,
  "retryPolicy": {"MaxAttempts": 4, "InitialBackoff": ".01s", "MaxBackoff": ".01s", "BackoffMultiplier": 1.0, "RetryableStatusCodes": ["UNAVAILABLE"]}}]}`,
		},
		leaf: "backend", byClass: [4]float64{16, 1, 4, 1}, sustained: 4.2, hold: 8275 * time.Millisecond,
		findings: []string{CheckBudget, CheckBudget, CheckDeadline},
	},
	{
		// Envoy Gateway's output: a list of RouteConfigurations in
		// camelCase, retryOn Istio's default conditions with
		// retriableStatusCodes [500], numRetries 3; behind it a recoil
		// client that retries everything 3 times on a 100 ms constant
		// backoff, Retry-After ignored. 500: 4 × 3 = 12; reset: 4 × 3 =
		// 12; a 503 on an HTTP edge is no condition of the route's
		// (unavailable reads a gRPC status): 1 × 3 = 3; 429: 1 × 3 = 3.
		// The worst class, 500, once the client's default token bucket has
		// drained: 4 × 1 = 4. Hold: the client's 3 attempts of the
		// model's 2 s + 2 × 100 ms (no 60 s Retry-After under
		// retry-everything) = 6.2 s; the route's 4 attempts of it + 25 +
		// 75 + 175 ms of Envoy's back-off = 25.075 s, cut at Envoy's
		// default route timeout, 15 s.
		name: "envoy gateway camelCase list over retry-everything",
		mesh: "services: [gw, api, {name: model, latency: 2s}]\nentries: [gw]\nedges:\n  - {from: gw, to: api, kind: envoy, config: routes.yaml, route: first-route}\n  - {from: api, to: model, kind: recoil, config: p.yaml}\n",
		files: map[string]string{
			"routes.yaml": "- name: first-listener\n  virtualHosts:\n  - domains: ['*']\n    name: first-listener/*\n    routes:\n    - match: {prefix: /}\n      name: first-route\n      route:\n        cluster: first-route-dest\n        retryPolicy:\n          numRetries: 3\n          retriableStatusCodes: [500]\n          retryOn: connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes\n",
			"p.yaml":      "max_attempts: 3\nclassify: retry-everything\nbackoff: {kind: constant, base: 100ms}\n",
		},
		leaf: "model", byClass: [4]float64{3, 12, 12, 3}, sustained: 4, hold: 15 * time.Second,
		findings: []string{CheckBudget, CheckDeadline, CheckJitter},
	},
	{
		// A googleapis service config: no maxAttempts, a 60 s timeout,
		// backoff from 100 ms × 1.3 to 60 s — its generated clients retry
		// until the timeout. The waits 0.1 · 1.3^k add up to
		// 0.1 (1.3^n − 1)/0.3 < 60 s for n ≤ 19 (48.4 s; 20 waits would
		// take 63 s): 20 attempts on UNAVAILABLE (503, reset), 1 on the
		// rest. No retryThrottling: sustained 20. Hold: the backend
		// answers within 30 s, so 20 attempts would take far more; the
		// 60 s timeout bounds it.
		name: "googleapis: retries until the timeout",
		mesh: "services: [app, {name: pubsub, latency: 30s}]\nentries: [app]\nedges:\n  - {from: app, to: pubsub, kind: grpc, config: sc.json, method: google.pubsub.v1.Publisher/Publish}\n",
		files: map[string]string{
			"sc.json": `{"methodConfig": [{"name": [{"service": "google.pubsub.v1.Publisher", "method": "Publish"}], "timeout": "60s",
  "retryPolicy": {"initialBackoff": "0.100s", "maxBackoff": "60s", "backoffMultiplier": 1.3, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`,
		},
		leaf: "pubsub", byClass: [4]float64{20, 1, 20, 1}, sustained: 20, hold: 60 * time.Second,
		findings: []string{CheckBudget},
	},
	{
		// An Istio route with retries and a DestinationRule in one file
		// (attempts 3 on 5xx,429, perTryTimeout 2 s, timeout 5 s;
		// connectionPool.http.maxRetries 20 and an outlier detection),
		// calling a policy whose classify mode is timeouts: an answer is
		// final. 503, 500, reset, 429: 4 × 1 = 4 each. Sustained: the cap
		// of 20 in flight at 100 calls lets 20 % retry: 1.2. Hold: the
		// policy's 3 attempts of 1 s each (its attempt_timeout) + 2 waits
		// of ≤ 100, 200 ms (recoil's default backoff: no overload wait,
		// since an answer is never retried) = 3.3 s, under its 10 s
		// timeout; the route cuts each at 2 s per try: 4 × 2 s + 25 + 75 +
		// 175 ms = 8.275 s, cut at the 5 s timeout — which the attempts
		// overrun: 3 start before it (0, 2.025, 4.1 s), not 4.
		name: "istio with a destination rule over a timeouts-only policy",
		mesh: "services: [web, api, {name: db, latency: 3s}]\nentries: [web]\nedges:\n  - {from: web, to: api, kind: istio, config: api.yaml}\n  - {from: api, to: db, kind: recoil, config: p.yaml}\n",
		files: map[string]string{
			"api.yaml": "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: api}\nspec:\n  hosts: [api]\n  http:\n  - route: [{destination: {host: api.prod.svc.cluster.local}}]\n    timeout: 5s\n    retries: {attempts: 3, perTryTimeout: 2s, retryOn: \"5xx,429\"}\n---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: api}\nspec:\n  host: api.prod.svc.cluster.local\n  trafficPolicy:\n    connectionPool: {http: {maxRetries: 20}}\n    outlierDetection: {consecutive5xxErrors: 7, interval: 10s}\n",
			"p.yaml":   "max_attempts: 3\nclassify: timeouts\nattempt_timeout: 1s\ntimeout: 10s\n",
		},
		leaf: "db", byClass: [4]float64{4, 4, 4, 4}, sustained: 1.2, hold: 5 * time.Second,
		findings: []string{CheckBudget, CheckTimeouts},
	},
	{
		// A published figure: a five-hop chain, each hop's proxy making 3
		// attempts with no budget, sends the failing last service 3^5 =
		// 243 attempts per client request (and 81, 27, 9, 3 to the hops
		// above it) — arqly.dev's "Build a Service Mesh", scene 06, "Timeout
		// and retry budget". As Istio routes retrying 5xx: 243 for a 503,
		// a 500 and a reset, 1 for a 429. Each hop's route has a 1 s
		// timeout, which bounds the hold at the first hop: 1 s.
		name: "five hops of three: 243 (published)",
		mesh: "services: [client, s1, s2, s3, s4, {name: s5, latency: 10s}]\nentries: [client]\nedges:\n" +
			"  - {from: client, to: s1, kind: istio, config: vs.yaml}\n  - {from: s1, to: s2, kind: istio, config: vs.yaml}\n" +
			"  - {from: s2, to: s3, kind: istio, config: vs.yaml}\n  - {from: s3, to: s4, kind: istio, config: vs.yaml}\n  - {from: s4, to: s5, kind: istio, config: vs.yaml}\n",
		files: map[string]string{"vs.yaml": "kind: VirtualService\nmetadata: {name: any}\nspec:\n  http:\n    - timeout: 1s\n      retries: {attempts: 2, retryOn: 5xx}\n      route: [{destination: {host: any}}]\n"},
		leaf:  "s5", byClass: [4]float64{243, 243, 243, 1}, sustained: 243, hold: time.Second,
		above:    map[string]float64{"s1": 3, "s2": 9, "s3": 27, "s4": 81},
		findings: []string{CheckBudget, CheckBudget, CheckBudget, CheckBudget, CheckBudget},
	},
	{
		// An Envoy route that hedges on its per-try timeout and honours a
		// server's Retry-After (rate_limited_retry_back_off, up to 4 s),
		// retrying 5xx and a 429 twice; its hedge_policy also asks for 3
		// initial requests, which Envoy does not implement. 3 attempts for
		// every class. The cluster caps retries in flight at 10: at 100
		// calls in flight, 10 % retry: 1.1 sustained. Hold: the hedged
		// copies start 1 s apart and the last runs as long as the API, 2 ×
		// 1 s + 3 s = 5 s; but answers that come back inside the per-try
		// timeout are retried after their waits — a Retry-After of up to
		// 4 s, to which Envoy adds up to half again: 6 s —, 3 × 1 s + 2 ×
		// 6 s = 15 s, the longer, inside the 30 s timeout.
		name: "envoy hedging on per-try timeout, with rate-limited back-off",
		mesh: "services: [edge, {name: api, latency: 3s}]\nentries: [edge]\nedges:\n  - {from: edge, to: api, kind: envoy, config: envoy.yaml}\n",
		files: map[string]string{
			"envoy.yaml": "static_resources:\n  listeners:\n  - filter_chains:\n    - filters:\n      - typed_config:\n          route_config:\n            virtual_hosts:\n            - domains: [\"*\"]\n              routes:\n              - match: {prefix: /}\n                route:\n                  cluster: api\n                  timeout: 30s\n                  hedge_policy: {hedge_on_per_try_timeout: true, initial_requests: 3}\n                  retry_policy:\n                    retry_on: 5xx,retriable-status-codes\n                    retriable_status_codes: [429]\n                    num_retries: 2\n                    per_try_timeout: 1s\n                    rate_limited_retry_back_off:\n                      reset_headers: [{name: Retry-After, format: SECONDS}]\n                      max_interval: 4s\n  clusters:\n  - name: api\n    circuit_breakers: {thresholds: [{max_retries: 10}]}\n",
		},
		leaf: "api", byClass: [4]float64{3, 3, 3, 3}, sustained: 1.1, hold: 15 * time.Second,
		findings: []string{CheckBudget},
	},
	{
		// Istio's DestinationRule retryBudget (Istio 1.27 on: Envoy's
		// retry_budget on the host's cluster) over a recoil client with no
		// budget. The route retries 3 times on 5xx: 4 attempts for a 503, a
		// 500 and a reset, 1 for a 429; the client makes 2 of each class
		// (recoil's default classification retries them all). Leaf: 4 × 2 =
		// 8, 8, 8, and 1 × 2 = 2. Sustained, the budget lets 25 % of the
		// route's calls retry: 1.25 × 2 = 2.5. Hold: the client's 2
		// attempts of 1 s and one wait of up to 61 s (a Retry-After of up
		// to 60 s and the tenth more recoil adds, at most a second) = 63 s,
		// four times over with Envoy's back-off under the route, cut at its
		// 10 s timeout. The client has neither budget nor deadline.
		name: "a DestinationRule's retryBudget over a client without one",
		mesh: "services: [web, reviews, {name: ratings, latency: 1s}]\nentries: [web]\nedges:\n  - {from: web, to: reviews, kind: istio, config: reviews.yaml}\n  - {from: reviews, to: ratings, kind: recoil, config: p.yaml}\n",
		files: map[string]string{
			"reviews.yaml": "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: reviews}\nspec:\n  hosts: [reviews]\n  http:\n  - route: [{destination: {host: reviews}}]\n    timeout: 10s\n    retries: {attempts: 3, retryOn: 5xx}\n---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: reviews}\nspec:\n  host: reviews.default.svc.cluster.local\n  trafficPolicy:\n    connectionPool: {http: {maxRetries: 50}}\n    retryBudget: {percent: 25, minRetryConcurrency: 5}\n",
			"p.yaml":       "max_attempts: 2\nbudget: none\n",
		},
		leaf: "ratings", byClass: [4]float64{8, 8, 8, 2}, sustained: 2.5, hold: 10 * time.Second,
		above:    map[string]float64{"reviews": 4},
		findings: []string{CheckBudget, CheckDeadline},
	},
	{
		// The subset and port a route sends to choose the policy, as Istio
		// merges them: the rule's port-level setting for 9080 replaces its
		// policy (maxRetries 2, and no retryBudget, which port-level
		// settings do not carry), and subset v2's retryBudget of 5 % goes
		// over that. The route retries twice on 5xx: 3 attempts for a
		// 503, a 500 and a reset, 1 for a 429; sustained 1.05. Hold: 3
		// attempts of 1 s and Envoy's waits of up to 25 and 75 ms = 3.1 s,
		// inside the 5 s timeout. Nothing is missing.
		name:  "a DestinationRule's subset and port choose its policy",
		mesh:  "services: [productpage, {name: reviews, latency: 1s}]\nentries: [productpage]\nedges:\n  - {from: productpage, to: reviews, kind: istio, config: reviews.yaml}\n",
		files: map[string]string{"reviews.yaml": reviewsSubsets("subset: v2, ")},
		leaf:  "reviews", byClass: [4]float64{3, 3, 3, 1}, sustained: 1.05, hold: 3100 * time.Millisecond,
	},
	{
		// The same rule for a route to no subset: the port-level setting
		// alone, 2 retries in flight and no budget — at 100 calls in flight
		// 2 % of them retry: 1.02, and the edge has no budget.
		name:  "a DestinationRule's port-level setting drops its budget",
		mesh:  "services: [productpage, {name: reviews, latency: 1s}]\nentries: [productpage]\nedges:\n  - {from: productpage, to: reviews, kind: istio, config: reviews.yaml}\n",
		files: map[string]string{"reviews.yaml": reviewsSubsets("")},
		leaf:  "reviews", byClass: [4]float64{3, 3, 3, 1}, sustained: 1.02, hold: 3100 * time.Millisecond,
		findings: []string{CheckBudget},
	},
}

// reviewsSubsets is a VirtualService sending to reviews on port 9080 (dest
// adds to its destination) and a DestinationRule with a retry budget of
// 20 %, a port-level setting for 9080 and a subset v2 of its own budget.
func reviewsSubsets(dest string) string {
	return "kind: VirtualService\nmetadata: {name: reviews}\nspec:\n  hosts: [reviews]\n  http:\n  - route: [{destination: {host: reviews, " + dest + "port: {number: 9080}}}]\n    timeout: 5s\n    retries: {attempts: 2, retryOn: 5xx}\n" +
		"---\nkind: DestinationRule\nmetadata: {name: reviews}\nspec:\n  host: reviews\n  trafficPolicy:\n    retryBudget: {percent: 20}\n    portLevelSettings:\n    - port: {number: 9080}\n      connectionPool: {http: {maxRetries: 2}}\n" +
		"  subsets:\n  - name: v1\n    labels: {version: v1}\n  - name: v2\n    labels: {version: v2}\n    trafficPolicy:\n      retryBudget: {percent: 5}\n"
}

// TestChainNotes: what the audit reads but does not multiply is said:
// the outlier detection, the googleapis reading of a missing maxAttempts,
// Envoy's hedge initial_requests (not implemented) and its rate-limited
// waits.
func TestChainNotes(t *testing.T) {
	want := map[string]string{
		"googleapis: retries until the timeout":                        "retry until the 1m0s timeout — 20 attempts",
		"istio with a destination rule over a timeouts-only policy":    "DestinationRule api: outlierDetection ejects a host after 7 consecutive errors, at most 10%",
		"envoy hedging on per-try timeout, with rate-limited back-off": "rate_limited_retry_back_off: a server's reset header of up to 4s can make a retry wait up to 6s (Envoy adds up to half again as jitter) hedge_policy.initial_requests 3: Envoy does not implement it, and sends one request",
	}
	for _, c := range chains {
		w, ok := want[c.name]
		if !ok {
			continue
		}
		delete(want, c.name)
		m, err := Parse("m.yaml", []byte(c.mesh), mapOpener(c.files))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(m.Edges[0].Retry.Notes, " "); !strings.Contains(got, w) {
			t.Errorf("%s: notes %q, want %q", c.name, got, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("no chains named %v", want)
	}
}
