// Package recoilgrpc runs recoil's one retry loop under gRPC: client
// interceptors driven by a recoil.Policy that classify status codes as
// gRFC A6 does, honour the server's pushback and google.rpc.RetryInfo,
// never wait past the context's deadline, retry streams until their
// first response message, fall back across channels and hedge unary
// calls; and server interceptors that speak the hop protocol
// (docs/hop-protocol.md) in metadata and shed retries first when over a
// concurrency limit.
//
// It is a leaf package: it imports google.golang.org/grpc, and the core
// packages stay on the standard library.
//
// # Usage
//
// On the client, one Client per dependency, its interceptors on the
// channel, and grpc-go's own retry off so attempts do not multiply:
//
//	rc := &recoilgrpc.Client{Policy: &recoil.Policy{MaxAttempts: 3}, Hop: true}
//	cc, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(creds),
//		grpc.WithDisableRetry(),
//		grpc.WithChainUnaryInterceptor(rc.Unary),
//		grpc.WithChainStreamInterceptor(rc.Stream))
//
// On the server, a Server's interceptors put the caller's retry budget in
// every handler's context, so calls made while serving — through a Client,
// a recoilhttp.Transport or recoil.Do — spend from it, and report what
// they spent in the trailer:
//
//	var hs recoilgrpc.Server
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(hs.Unary), grpc.ChainStreamInterceptor(hs.Stream))
//
// A team moving off grpc-go's built-in retries turns its service config
// into a policy with PolicyFromServiceConfig, a retryPolicy or a
// hedgingPolicy alike (gRFC A6).
//
// # Fallback across channels
//
// Under a policy with a recoil.Fallback, each attempt goes to its target's
// Channel: the call's own connection, or another — another region, another
// cluster — with credentials of its own. The caller's credentials never
// leave its own connection's target. NOT_FOUND, UNAUTHENTICATED,
// PERMISSION_DENIED, a message too large, and an ErrorInfo naming a spent
// quota or a context too long move the call on under
// recoil.DefaultFallbackRule, as their HTTP equivalents do (see Classify);
// FallbackRule moves on from UNAVAILABLE and a bare RESOURCE_EXHAUSTED too.
// Every attempt, on whichever channel, counts against the one policy:
//
//	region2, _ := grpc.NewClient(region2Target, grpc.WithTransportCredentials(creds))
//	rc := &recoilgrpc.Client{Policy: &recoil.Policy{Fallback: &recoil.Fallback{
//		Targets: []recoil.Target{
//			recoilgrpc.NewTarget("region-1", nil, nil), // the call's own connection
//			recoilgrpc.NewTarget("region-2", region2, metadata.Pairs("x-api-key", key2)),
//		},
//		Rule: recoilgrpc.FallbackRule,
//	}}}
//
// # Hedging
//
// Under a policy with a recoil.Hedge, a unary call that is slow to answer
// is raced by another attempt after the hedge delay; the first success
// wins and the others are cancelled. Each attempt decodes into a reply of
// its own, and the caller gets the winner's reply, header, trailer and
// peer. A hedge is an attempt like any other: MaxAttempts, the budgets,
// the limiter and the deadline count it. Hedge only methods safe to run
// twice at once. Streams are not raced: under a Hedge a stream runs one
// attempt at a time, retried as the policy classifies.
package recoilgrpc
