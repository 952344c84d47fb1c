package idemgrpc_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil/recoilgrpc/idemgrpc"
)

// The interceptor around a charge, called twice under one key as a
// retrying client would: the second call gets the first's reply.
func ExampleUnaryServerInterceptor() {
	idem, err := idemgrpc.UnaryServerInterceptor(idemgrpc.Config{Required: true})
	if err != nil {
		panic(err)
	}
	_ = grpc.NewServer(grpc.ChainUnaryInterceptor(idem)) // how a server takes it

	charge := func(ctx context.Context, req any) (any, error) {
		fmt.Println("charging", req.(*wrapperspb.StringValue).GetValue())
		return wrapperspb.String("ch_1"), nil
	}
	// The caller's credentials scope its keys (Config.Scope nil:
	// ScopeByCredentials).
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(idemgrpc.MetadataKey, `"order-42"`, "authorization", "Bearer sk-shop"))
	info := &grpc.UnaryServerInfo{FullMethod: "/shop.Payments/Charge"}
	for range 2 {
		reply, err := idem(ctx, wrapperspb.String("100"), info, charge)
		fmt.Println(reply.(*wrapperspb.StringValue).GetValue(), err)
	}
	// Output:
	// charging 100
	// ch_1 <nil>
	// ch_1 <nil>
}

// A failure that says "nothing was done" releases the key, so the client's
// retry runs the handler again; an answer that says the call itself is
// wrong is stored and replayed.
func ExampleDefaultKeep() {
	idem, err := idemgrpc.UnaryServerInterceptor(idemgrpc.Config{}) // Keep: DefaultKeep
	if err != nil {
		panic(err)
	}
	runs := 0
	ship := func(ctx context.Context, req any) (any, error) {
		runs++
		if runs == 1 {
			return nil, status.Error(codes.Unavailable, "warehouse API down")
		}
		return wrapperspb.String("shipment 7"), nil
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(idemgrpc.MetadataKey, `"ship-order-42"`, "x-api-key", "sk-warehouse"))
	info := &grpc.UnaryServerInfo{FullMethod: "/shop.Shipping/Ship"}
	for range 3 {
		reply, err := idem(ctx, wrapperspb.String("order-42"), info, ship)
		v, _ := reply.(*wrapperspb.StringValue)
		fmt.Printf("handler runs: %d, %v %q\n", runs, status.Code(err), v.GetValue())
	}
	fmt.Println(idemgrpc.DefaultKeep(codes.Unavailable), idemgrpc.DefaultKeep(codes.InvalidArgument))
	// Output:
	// handler runs: 1, Unavailable ""
	// handler runs: 2, OK "shipment 7"
	// handler runs: 2, OK "shipment 7"
	// false true
}

// Two tenants that send the same key get two keys: the tenant is read from
// the x-tenant-id metadata a gateway in front sets.
func ExampleScopeMetadata() {
	idem, err := idemgrpc.UnaryServerInterceptor(idemgrpc.Config{Scope: idemgrpc.ScopeMetadata("x-tenant-id")})
	if err != nil {
		panic(err)
	}
	runs := 0
	create := func(ctx context.Context, req any) (any, error) {
		runs++
		return wrapperspb.String(fmt.Sprint("invoice ", runs)), nil
	}
	info := &grpc.UnaryServerInfo{FullMethod: "/billing.Invoices/Create"}
	for _, tenant := range []string{"acme", "globex", "acme"} {
		ctx := metadata.NewIncomingContext(context.Background(),
			metadata.Pairs(idemgrpc.MetadataKey, `"inv-2026-12"`, "x-tenant-id", tenant))
		reply, _ := idem(ctx, wrapperspb.String("{}"), info, create)
		fmt.Println(tenant, reply.(*wrapperspb.StringValue).GetValue())
	}
	// Output:
	// acme invoice 1
	// globex invoice 2
	// acme invoice 1
}

// The default scope is the caller's credentials: two API keys that send
// the same idempotency key get two runs, and a key on a call with no
// credentials is refused rather than shared.
func ExampleScopeByCredentials() {
	idem, err := idemgrpc.UnaryServerInterceptor(idemgrpc.Config{}) // Scope: ScopeByCredentials
	if err != nil {
		panic(err)
	}
	runs := 0
	charge := func(ctx context.Context, req any) (any, error) {
		runs++
		return wrapperspb.String(fmt.Sprint("charge ", runs)), nil
	}
	info := &grpc.UnaryServerInfo{FullMethod: "/shop.Payments/Charge"}
	for _, apiKey := range []string{"sk-alice", "sk-bob", "sk-alice", ""} {
		md := metadata.Pairs(idemgrpc.MetadataKey, `"charge-1"`)
		if apiKey != "" {
			md.Set("x-api-key", apiKey)
		}
		reply, err := idem(metadata.NewIncomingContext(context.Background(), md), wrapperspb.String("100"), info, charge)
		v, _ := reply.(*wrapperspb.StringValue)
		fmt.Printf("%q %v\n", v.GetValue(), status.Code(err))
	}
	// Output:
	// "charge 1" OK
	// "charge 2" OK
	// "charge 1" OK
	// "" InvalidArgument
}

// A service whose only callers are your own jobs, each sending a random
// key, may share one scope — and says so in its configuration.
func ExampleInsecureSharedScope() {
	idem, err := idemgrpc.UnaryServerInterceptor(idemgrpc.Config{Scope: idemgrpc.InsecureSharedScope})
	if err != nil {
		panic(err)
	}
	runs := 0
	run := func(ctx context.Context, req any) (any, error) {
		runs++
		return wrapperspb.String(fmt.Sprint("run ", runs)), nil
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(idemgrpc.MetadataKey, `"6f1c9e0a-5b7d-4e2a"`))
	for range 2 {
		reply, _ := idem(ctx, wrapperspb.String("job"), &grpc.UnaryServerInfo{FullMethod: "/jobs.Runner/Run"}, run)
		fmt.Println(reply.(*wrapperspb.StringValue).GetValue())
	}
	// Output:
	// run 1
	// run 1
}
