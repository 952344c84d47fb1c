// Package hop is the hop protocol: a retry budget, a deadline and an attempt
// number that travel with a request through every service it crosses, and
// the retries spent that travel back with the response.
//
// Three layers that each make three attempts send 3×3×3 = 27 requests to a
// dependency that is down, and no configuration file contains the number 27
// (docs/why.md, section 2). Each layer owns its own allowance and cannot see the retries
// below it. Once the allowance travels with the request instead, the
// product collapses to one number: the edge sets a budget B, every hop that
// retries spends from it, every response reports what was spent below, and
// retries anywhere in the call tree stay within B however many layers there
// are.
//
// The headers (HTTP; gRPC metadata uses the same names in lower case):
//
//	Recoil-Retry-Budget: 2      request: retries left for the whole tree below
//	Recoil-Deadline-Ms: 2950    request: how long the caller will still wait
//	Recoil-Attempt: 1           request: attempt number at the sending hop
//	Recoil-Retries-Spent: 2     response: retries made at and below the responder
//	Recoil-Retry: no            response: do not retry, the server is shedding load
//
// docs/hop-protocol.md in the repository is the specification. This package
// is transport-neutral and imports only the standard library: package
// recoilhttp's Transport and Middleware and the gRPC interceptors use it,
// through [Getter] and [Setter], which http.Header satisfies, and
// [Metadata], which converts gRPC's metadata.MD.
//
// # A hop, step by step
//
// On receiving a request, read it and open an account:
//
//	in, err := hop.ParseRequest(r.Header) // err: log it; the bad field reads as absent
//	// The request's budget, or the hop's own at an edge (or from a peer that
//	// does not speak the protocol); an untrusted caller may lower the
//	// budget, never raise it.
//	acct := hop.NewAccount(in.AccountBudget(ownBudget, trustIncoming))
//	ctx := hop.WithAccount(r.Context(), acct)
//	if in.HasDeadline { // a deadline can only make the hop stop sooner
//		var cancel context.CancelFunc
//		ctx, cancel = context.WithTimeout(ctx, in.Deadline-hop.DefaultDeadlineMargin)
//		defer cancel()
//	}
//
// On each call the handler makes, spend from it:
//
//	acct := hop.AccountFrom(ctx) // nil: make one, this caller is an edge
//	for attempt := 1; ; attempt++ {
//		out := hop.Request{Budget: acct.Remaining(), HasBudget: true, Attempt: attempt}
//		// ... and the attempt's remaining deadline, if it has one
//		out.Write(req.Header)
//		resp, err := send(req)
//		var back hop.Response // none if no response arrived
//		if resp != nil {
//			back, _ = hop.ParseResponse(resp.Header)
//		}
//		acct.Below(back.Spent)
//		if ok(resp, err) || back.NoRetry || attempt == maxAttempts || !acct.TrySpend() {
//			break
//		}
//	}
//
// When answering, report what was spent:
//
//	hop.Response{Spent: acct.Spent()}.Write(w.Header())
//
// # Where the bound is exact
//
// Along one path from the edge to a leaf, and for calls a hop makes one
// after another, retries stay within the edge's budget. Two things loosen
// it. A hop that fans out concurrently sends each branch the budget that
// remains when the branch starts, so k branches in flight together may
// spend up to k times that before their reports come back. And an attempt
// that is abandoned (timed out, connection lost) reports nothing, so what
// its subtree spent is not subtracted; the deadline sent with the attempt is
// what stops that subtree.
package hop
