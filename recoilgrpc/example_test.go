package recoilgrpc_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// exampleServer starts the test service on loopback with opts; stop ends it.
func exampleServer(ts *testServer, opts ...grpc.ServerOption) (addr string, stop func()) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&testDesc, ts)
	go srv.Serve(lis)
	return lis.Addr().String(), srv.Stop
}

// A Client's interceptors on a channel: the server is unavailable twice
// and answers the third attempt; the caller sees one call.
func ExampleClient() {
	var n atomic.Int32
	addr, stop := exampleServer(&testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		if n.Add(1) < 3 {
			return nil, status.Error(codes.Unavailable, "warming up")
		}
		return wrapperspb.String("hello, " + in.GetValue()), nil
	}})
	defer stop()

	rc := &recoilgrpc.Client{Policy: &recoil.Policy{MaxAttempts: 3, Backoff: backoff.Constant(0)}}
	cc, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(), // one retry layer, not two
		grpc.WithChainUnaryInterceptor(rc.Unary),
		grpc.WithChainStreamInterceptor(rc.Stream))
	if err != nil {
		panic(err)
	}
	defer cc.Close()

	out := new(wrapperspb.StringValue)
	err = cc.Invoke(context.Background(), callMethod, wrapperspb.String("gopher"), out)
	fmt.Println(out.GetValue(), err, "after", n.Load(), "attempts")
	// Output: hello, gopher <nil> after 3 attempts
}

// A Server's interceptors give each handler the caller's retry budget,
// and report in the trailer what was spent while serving.
func ExampleServer() {
	var hs recoilgrpc.Server
	addr, stop := exampleServer(&testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		acct := hop.AccountFrom(ctx) // what a Client or recoil.Do in here spends from
		fmt.Println("budget in the handler:", acct.Remaining())
		acct.TrySpend() // as a retry made while serving would
		return in, nil
	}}, grpc.ChainUnaryInterceptor(hs.Unary))
	defer stop()

	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer cc.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "recoil-retry-budget", "1")
	var trailer metadata.MD
	err = cc.Invoke(ctx, callMethod, wrapperspb.String("x"), new(wrapperspb.StringValue), grpc.Trailer(&trailer))
	fmt.Println("spent below:", trailer.Get("recoil-retries-spent"), err)
	// Output:
	// budget in the handler: 1
	// spent below: [1] <nil>
}

// A service config's retryPolicy, as a recoil.Policy.
func ExamplePolicyFromServiceConfig() {
	sc := []byte(`{
	  "methodConfig": [{
	    "name": [{"service": "pkg.Greeter"}],
	    "retryPolicy": {
	      "maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
	      "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]
	    }
	  }],
	  "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
	}`)
	p, err := recoilgrpc.PolicyFromServiceConfig(sc, "/pkg.Greeter/SayHello")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.MaxAttempts, p.Backoff)
	fmt.Println(p.Classify(status.Error(codes.Unavailable, "")).Class, p.Classify(status.Error(codes.InvalidArgument, "")).Class)

	_, err = recoilgrpc.PolicyFromServiceConfig([]byte(`{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":3,"initialBackoff":"100ms"}}]}`), "/pkg.Greeter/SayHello")
	fmt.Println(err)
	// Output:
	// 4 {100ms 2 1s}
	// transient permanent
	// recoilgrpc: service config: methodConfig[0].retryPolicy.initialBackoff: "100ms", want a duration such as "0.1s"
}

// The package's classification of a status, with the default retryable set.
func ExampleClassify() {
	for _, err := range []error{
		status.Error(codes.Unavailable, "connection refused"),
		status.Error(codes.ResourceExhausted, "quota"),
		status.Error(codes.InvalidArgument, "bad field"),
	} {
		fmt.Println(recoilgrpc.Classify(err, nil))
	}
	// Output:
	// transient: Unavailable: retryable
	// permanent: ResourceExhausted without pushback or RetryInfo: a quota does not refill by waiting
	// permanent: InvalidArgument: not in the retryable set
}

// A server's pushback, read as gRFC A6 says: a wait, or a reason to stop.
func ExampleParsePushback() {
	for _, v := range [][]string{{"250"}, {"-1"}, {"soon"}, nil} {
		wait, ok, stop := recoilgrpc.ParsePushback(v)
		fmt.Printf("%q: wait %v %v, stop %q\n", v, wait, ok, stop)
	}
	// Output:
	// ["250"]: wait 250ms true, stop ""
	// ["-1"]: wait 0s false, stop "the server's pushback was negative (grpc-retry-pushback-ms: \"-1\"): do not retry"
	// ["soon"]: wait 0s false, stop "malformed pushback \"soon\" (grpc-retry-pushback-ms), which means do not retry"
	// []: wait 0s false, stop ""
}

// A service whose RESOURCE_EXHAUSTED means "busy, come back" rather than
// "quota spent" widens the default set rather than replacing it. (The
// Client's interceptors classify with the same function.)
func ExampleDefaultRetryable() {
	exports := &recoilgrpc.Client{Retryable: append(recoilgrpc.DefaultRetryable(), codes.ResourceExhausted)}

	busy := status.Error(codes.ResourceExhausted, "too many concurrent exports")
	fmt.Println("default:", recoilgrpc.Classify(busy, nil).Class)
	fmt.Println("widened:", recoilgrpc.Classify(busy, exports.Retryable).Class)
	// Output:
	// default: permanent
	// widened: throttled
}
