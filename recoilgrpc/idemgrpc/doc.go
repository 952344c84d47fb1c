// Package idemgrpc is the gRPC server side of package idempotency: a unary
// server interceptor that honours an idempotency-key in the request
// metadata with the HTTP middleware's rules, over any idempotency.Store:
//
//	idem, err := idemgrpc.UnaryServerInterceptor(idemgrpc.Config{Store: store, Required: true})
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(idem))
//
// A finished key replays the stored reply or error; a key in progress is
// Aborted with a pushback trailer (gRFC A6's grpc-retry-pushback-ms); a key
// reused with another request is FailedPrecondition. Streaming methods are
// not covered: a stream's side effects have no single outcome to replay.
package idemgrpc
