package recoilgrpc_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
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

// A Client that falls back across channels: the primary region no longer
// serves the method (NOT_FOUND), so the call moves at once to a second
// region's connection, which gets its own API key and never the caller's.
func ExampleNewTarget() {
	primary, stopA := exampleServer(&testServer{call: func(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		return nil, status.Error(codes.NotFound, "retired in this region")
	}})
	defer stopA()
	secondary, stopB := exampleServer(&testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		key := metadata.ValueFromIncomingContext(ctx, "x-api-key")
		return wrapperspb.String(fmt.Sprintf("hello, %s (key %v)", in.GetValue(), key)), nil
	}})
	defer stopB()

	insecureCreds := grpc.WithTransportCredentials(insecure.NewCredentials())
	region2, err := grpc.NewClient("passthrough:///"+secondary, insecureCreds)
	if err != nil {
		panic(err)
	}
	defer region2.Close()
	fb := &recoil.Fallback{Targets: []recoil.Target{
		recoilgrpc.NewTarget("region-1", nil, nil), // the call's own connection
		recoilgrpc.NewTarget("region-2", region2, metadata.Pairs("x-api-key", "key-2")),
	}}
	rc := &recoilgrpc.Client{Policy: &recoil.Policy{Fallback: fb}}
	cc, err := grpc.NewClient("passthrough:///"+primary, insecureCreds, grpc.WithDisableRetry(), grpc.WithChainUnaryInterceptor(rc.Unary))
	if err != nil {
		panic(err)
	}
	defer cc.Close()

	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "key-1")
	out := new(wrapperspb.StringValue)
	err = cc.Invoke(ctx, callMethod, wrapperspb.String("gopher"), out)
	fmt.Println(out.GetValue(), err)
	for _, s := range fb.Status(time.Time{}) {
		fmt.Println(s.Target, "cooling:", s.Cooling > 0)
	}
	// Output:
	// hello, gopher (key [key-2]) <nil>
	// region-1 cooling: true
	// region-2 cooling: false
}

// A second API key on the same connection: a Channel with no connection of
// its own sends the attempt down the call's own, with its metadata in
// place of the caller's.
func ExampleNewChannel() {
	addr, stop := exampleServer(&testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		if key := metadata.ValueFromIncomingContext(ctx, "x-api-key"); len(key) != 1 || key[0] != "second" {
			return nil, status.Errorf(codes.Unauthenticated, "key %v revoked", key)
		}
		return wrapperspb.String("hello, " + in.GetValue()), nil
	}})
	defer stop()

	fb := &recoil.Fallback{Targets: []recoil.Target{
		{Name: "first key"}, // no Value: the call as its caller made it
		{Name: "second key", Value: recoilgrpc.NewChannel(nil, metadata.Pairs("x-api-key", "second"))},
	}}
	rc := &recoilgrpc.Client{Policy: &recoil.Policy{Fallback: fb}}
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(), grpc.WithChainUnaryInterceptor(rc.Unary))
	if err != nil {
		panic(err)
	}
	defer cc.Close()

	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "first")
	out := new(wrapperspb.StringValue)
	err = cc.Invoke(ctx, callMethod, wrapperspb.String("gopher"), out)
	fmt.Println(out.GetValue(), err)
	fmt.Println("first key out until restored:", fb.Status(time.Time{})[0].Out)
	// Output:
	// hello, gopher <nil>
	// first key out until restored: true
}

// FallbackRule moves a call on from UNAVAILABLE, which gRFC A6 makes
// transient and DefaultFallbackRule therefore retries where it is.
func ExampleFallbackRule() {
	v := recoilgrpc.Classify(status.Error(codes.Unavailable, "connection refused"), nil)
	fmt.Printf("%s, code %q\n", v.Class, v.Code)
	fmt.Printf("default: %+v\n", recoil.DefaultFallbackRule(v, recoil.DefaultCooldown))
	fmt.Printf("gRPC:    %+v\n", recoilgrpc.FallbackRule(v, recoil.DefaultCooldown))

	fb := &recoil.Fallback{Targets: []recoil.Target{{Name: "us-east"}, {Name: "eu-west"}}, Rule: recoilgrpc.FallbackRule}
	_ = &recoilgrpc.Client{Policy: &recoil.Policy{Fallback: fb}}
	// Output:
	// transient, code "unavailable"
	// default: {Move:false Cool:0s Longer:false Why:}
	// gRPC:    {Move:true Cool:15s Longer:false Why:unavailable}
}

// A service config's hedgingPolicy, as a recoil.Policy: three attempts in
// all, a hedge every 50 ms while none has answered, and UNAVAILABLE the one
// non-fatal code.
func ExamplePolicyFromServiceConfig_hedging() {
	sc := []byte(`{
	  "methodConfig": [{
	    "name": [{"service": "pkg.Search"}],
	    "hedgingPolicy": {
	      "maxAttempts": 3, "hedgingDelay": "0.05s",
	      "nonFatalStatusCodes": ["UNAVAILABLE"]
	    }
	  }]
	}`)
	p, err := recoilgrpc.PolicyFromServiceConfig(sc, "/pkg.Search/Query")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.MaxAttempts, p.Hedge.Delay, p.Hedge.MaxHedges)
	fmt.Println(p.Classify(status.Error(codes.Unavailable, "")).Class, p.Classify(status.Error(codes.Internal, "")).Class)
	// Output:
	// 3 50ms 2
	// transient permanent
}

// A Client whose policy hedges: the first attempt is stuck, a second is
// sent after the delay and answers, and the stuck one is cancelled.
func ExampleClient_hedging() {
	cancelled := make(chan string, 1)
	addr, stop := exampleServer(&testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		if len(metadata.ValueFromIncomingContext(ctx, recoilgrpc.PreviousAttemptsKey)) == 0 {
			<-ctx.Done() // the first attempt is stuck
			cancelled <- "the stuck attempt was cancelled"
			return nil, ctx.Err()
		}
		return wrapperspb.String("hello, " + in.GetValue()), nil
	}})
	defer stop()

	rc := &recoilgrpc.Client{Policy: &recoil.Policy{Hedge: &recoil.Hedge{Delay: 20 * time.Millisecond}}}
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDisableRetry(), grpc.WithChainUnaryInterceptor(rc.Unary))
	if err != nil {
		panic(err)
	}
	defer cc.Close()
	cc.Connect() // so the first attempt is on the wire before the hedge
	for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
		cc.WaitForStateChange(context.Background(), s)
	}

	out := new(wrapperspb.StringValue)
	err = cc.Invoke(context.Background(), callMethod, wrapperspb.String("gopher"), out)
	fmt.Println(out.GetValue(), err)
	fmt.Println(<-cancelled)
	// Output:
	// hello, gopher <nil>
	// the stuck attempt was cancelled
}
