// Package recoilgrpc runs recoil's one retry loop under gRPC: client
// interceptors driven by a recoil.Policy that classify status codes as
// gRFC A6 does, honour the server's pushback and google.rpc.RetryInfo,
// never wait past the context's deadline, and retry streams until their
// first response message; and server interceptors that speak the hop
// protocol (docs/hop-protocol.md) in metadata and shed retries first when
// over a concurrency limit.
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
// into a policy with PolicyFromServiceConfig.
package recoilgrpc
