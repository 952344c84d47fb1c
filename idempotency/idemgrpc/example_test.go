package idemgrpc_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil/idempotency/idemgrpc"
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
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(idemgrpc.MetadataKey, `"order-42"`))
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
