// Package idempotency makes a retried side effect a no-op on the receiving
// side: the second attempt of a request, or of any step, gets the first
// one's outcome instead of doing the work again.
//
// recoil's Transport sends one Idempotency-Key per logical request; this
// package is the server that honours it, per the IETF draft "The
// Idempotency-Key HTTP Header Field"
// (draft-ietf-httpapi-idempotency-key-header). Put a Middleware in front
// of the handlers whose requests have side effects:
//
//	h, err := idempotency.NewMiddleware(charges, idempotency.Config{
//		Store:    store, // nil: a bounded memory store
//		Required: true,  // no key: 400
//	})
//
// Keys are per client: by default the caller's credentials (its
// Authorization, X-Api-Key or TLS client certificate, hashed before they
// reach the store) are the key's scope, a key on a request without
// credentials is refused, and InsecureSharedScope — named for what it
// risks — puts every client in one scope. A finished key replays the
// stored status, headers, body and trailer exactly, to its own client; a
// key whose original is still running gets 409 with Retry-After; a key
// reused with another method, path or body gets 422; errors are
// application/problem+json.
//
// For a side effect that is not an HTTP request — a tool call, an agent's
// step — Do runs a function at most once per key and returns the stored
// result on repeats:
//
//	receipt, err := idempotency.Do(ctx, store, "order-42/charge", func(ctx context.Context) (Receipt, error) {
//		return payments.Charge(ctx, order)
//	})
//
// Three stores implement Store: Memory (this package; bounded, with
// expiry, one process), redisstore (Redis, Lua scripts, the lease as the
// key's expiry) and pgstore (PostgreSQL, with recovery points for work in
// several steps). Each request holds its key under a lease: if its process
// dies, a retry takes the key over once the lease runs out and runs the
// work again, so a side effect is done at least once, and exactly once
// unless the process dies between the effect and storing the response.
// pgstore's recovery points close that gap for work kept in the same
// database. The repository's docs/idempotency.md tells every case.
package idempotency
