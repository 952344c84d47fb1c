// Package retryloop defines an analyzer that finds hand-written retry loops
// and retry configurations that turn a dependency's blip into an outage.
//
// Each finding names one check; the names are stable and are what a
// //recoil:ignore comment takes:
//
//	unclassified  a loop around an HTTP client, a model SDK or a gRPC method
//	              that, on failure, waits and goes round again on every
//	              error, on every non-2xx status, or on a status that will
//	              not change (400, 401, 403, 404, 413, 422)
//	nojitter      a wait in a retry loop whose duration is constant or purely
//	              exponential: every client that failed together retries
//	              together
//	deafwait      time.Sleep (or a bare <-time.After) where a context is in
//	              scope: the caller's cancellation and deadline go unheard
//	unbounded     a retry loop with no bound on attempts or on total time,
//	              or a long poll or reconnect loop whose failures go round
//	              after a wait of their own with nothing to end them
//	retryafter    a loop that retries 429 or 503 without reading the
//	              Retry-After header, in the loop or a helper it calls
//	stacked       an openai-go or anthropic-sdk-go client that keeps its own
//	              retries under a retrying recoilhttp.Transport, or grpc-go's
//	              retryPolicy left on under a recoilgrpc interceptor
//	ignore        a malformed //recoil:ignore comment (no check, an unknown
//	              check, or no reason)
//
// A comment
//
//	//recoil:ignore <check> <reason>
//
// on the line of a finding or the line above it silences that one finding.
// The reason is required: an ignore without one is itself reported.
//
// Helper functions that wait, call a remote endpoint or read Retry-After are
// followed through the package and, by analysis facts, across packages.
//
// The analyzer is run by the recoil-vet command (go vet -vettool, or on its
// own) and by the golangci-lint module plugin in package
// github.com/recoil-go/recoil/vet/plugin.
package retryloop
