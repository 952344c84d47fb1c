// Package recoilhttp brings recoil to HTTP: a Transport that retries like a
// careful engineer, the classifier behind it, and the server Middleware of
// the hop protocol. It imports the standard library only.
//
// # Client
//
// Wrap any http.RoundTripper:
//
//	client := &http.Client{Transport: &recoilhttp.Transport{
//		Policy:      recoil.Interactive(),
//		IdleTimeout: 15 * time.Second, // streams: an inactivity limit, not a total one
//	}}
//
// or, under a model provider's official SDK, with the SDK's own retries off
// so that attempts do not multiply:
//
//	client := anthropic.NewClient(
//		option.WithHTTPClient(&http.Client{Transport: recoilhttp.ModelAPI(nil)}),
//		option.WithMaxRetries(0),
//	)
//
// Classify decides what each attempt came to, from the status, the headers
// (x-should-retry, Retry-After and its relatives) and the provider's error
// body: a validator's 400 is tried once and its complaint reaches the caller
// and the log line; a 429 that says insufficient_quota is not retried, since
// waiting will not refill a quota; a 529 waits longer than a 500.
//
// # Server
//
// NewMiddleware reads the caller's remaining retry budget, deadline and
// attempt number (package hop, docs/hop-protocol.md) into each request's
// context, so a Transport used inside the handler spends from the same
// budget and stops at the same deadline without any code from the user: the
// retries of a whole call tree are bounded by the number the edge set, not by
// attempts to the power of layers.
//
// # Streams
//
// IdleBody and SSEIdleBody fail a body that stops delivering; a failure
// after content has been delivered is a *StreamError, never a silent retry.
package recoilhttp
