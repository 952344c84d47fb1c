// Package audit multiplies out the retry configuration of a call graph —
// a mesh — with the arithmetic of package sim/blast, so that the 27 no
// configuration file contains is printed before an outage finds it.
//
// A mesh file lists services, the entry points requests arrive at, and
// the edges between services; each edge names the configuration that
// sets its retries, in the format of whatever makes the call, read as its
// own program reads it (several documents, Kubernetes Lists, Envoy's
// snake_case or camelCase, grpc-go's field names in any case):
//
//   - an Envoy configuration in any shape its loaders take (kind envoy): a
//     route's timeout, retry_policy — num_retries, retry_on,
//     retriable_status_codes, per_try_timeout, retry_back_off,
//     rate_limited_retry_back_off —, hedge_policy (hedging on the per-try
//     timeout), and the cluster's circuit_breakers retry_budget and
//     max_retries;
//   - a gRPC service config (kind grpc, JSON): a methodConfig's timeout
//     and retryPolicy (maxAttempts, capped at 5 as gRPC caps it,
//     initialBackoff, maxBackoff, backoffMultiplier, retryableStatusCodes)
//     or hedgingPolicy (maxAttempts, hedgingDelay, nonFatalStatusCodes),
//     and the channel's retryThrottling (maxTokens, tokenRatio);
//   - Istio VirtualServices and DestinationRules (kind istio): an http
//     route's timeout and retries (attempts, perTryTimeout, retryOn), the
//     sidecar's default (SidecarDefault) when it has none, and its host's
//     DestinationRule — retryBudget, connectionPool.http.maxRetries and
//     outlierDetection, as the destination's subset and port choose them;
//   - a recoil policy file (kind recoil, package policyspec), its waits and
//     what it retries by its classify mode.
//
// A service may run an Istio sidecar, which retries each of its app's
// attempts on the same hop, and, called over HTTP, retries a reset of its
// own app before the request reached it (InboundDefault). Every figure is counted for each failure
// class (Classes: 503, 500, reset, 429), since a layer multiplies only
// what it retries. Infer builds a mesh from configuration files alone
// where they name the calls; ReadConfig reads every route of one file.
//
// Every value read remembers the file and line it came from, and every
// problem — in the mesh or in a configuration — is an *Error naming them.
//
// # Usage
//
//	m, err := audit.Load("mesh.yaml")
//	if err != nil {
//		return err // file:line: field: problem
//	}
//	r, err := audit.Analyze(m, audit.DefaultOptions())
//	if err != nil {
//		return err
//	}
//	for _, f := range r.Findings {
//		fmt.Println(f) // file:line: no-budget: a → b: …
//	}
//
// The command "recoil audit" prints a Report as text, as JSON, and draws
// the graph as a chart.
//
// # The figures
//
// For each entry point and each service its requests reach, over every
// path between them:
//
//   - WorstCase: the attempts one request sends when every attempt fails
//     and every budget is full, as at the start of an outage — each
//     path's product of attempts (blast.Reaching at a failure rate of 1),
//     added over the paths. Three layers of three: 27.
//   - Bounded: the same under the hop protocol: a run of recoil edges whose
//     first sets hop: B shares one account, and sends at most 1 + B
//     attempts to its end for each call into it.
//   - Sustained: once the budgets have drained under a failure that
//     lasts: a ratio budget lets through its ratio (attempts per call
//     1 + ratio), a token bucket nothing (1). The Envoy route with a 20 %
//     retry budget, the gRPC channel with retryThrottling and the recoil
//     policy with a 10 % ratio budget of the shipped example: 1.2 × 1 ×
//     1.1 = 1.32.
//   - Amplification and Tipping: blast's amplification model stacked layer
//     on layer (blast.StackLoad): the failing service fails each attempt
//     with the given rate, each layer's calls fail when all their attempts
//     did, and each layer's budget applies; capacity is Options.Headroom
//     times the load the service sees when nothing fails.
//   - Persistent and PersistentTipping: a share of requests meet a failure
//     that does not go away, every attempt they make failing, once the
//     budgets have drained (blast.PersistentLoad): 27 per request through
//     three unbudgeted layers, so 20 % of headroom is gone once 0.2/26 =
//     0.77 % of requests fail that way.
//
// For each entry point, the Hold: the longest one request can hold its
// caller along the slowest path — at each edge, Attempts attempts each
// bounded by the per-try timeout or the callee's own hold, plus the
// longest waits (or a server's Retry-After the client honours), at most
// the edge's timeout; a service that calls nothing holds for its latency,
// and one with none can hang.
//
// Findings name the edges that lack a retry budget, a deadline or jitter,
// whose attempts outlast their timeout, and a gRPC maxAttempts above what
// clients make, each at the line that says so or the block that should.
package audit
