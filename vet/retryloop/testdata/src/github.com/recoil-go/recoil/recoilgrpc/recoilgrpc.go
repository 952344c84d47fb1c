// Package recoilgrpc is a stub of recoil's gRPC interceptors.
package recoilgrpc

import (
	"context"

	"google.golang.org/grpc"
)

type Client struct{}

func (c *Client) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
