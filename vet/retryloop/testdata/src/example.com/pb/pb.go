// Package pb stands for generated gRPC client code.
package pb

import (
	"context"

	"google.golang.org/grpc"
)

type HelloRequest struct{ Name string }
type HelloReply struct{ Message string }

type GreeterClient interface {
	SayHello(ctx context.Context, in *HelloRequest, opts ...grpc.CallOption) (*HelloReply, error)
}
