// Package grpc is a stub of grpc-go.
package grpc

import "context"

type CallOption interface{ before() }

type DialOption interface{ apply() }

type dialOption struct{}

func (dialOption) apply() {}

type ClientConn struct{}

func (*ClientConn) Invoke(ctx context.Context, method string, args, reply any, opts ...CallOption) error {
	return nil
}

type UnaryInvoker func(ctx context.Context, method string, req, reply any, cc *ClientConn, opts ...CallOption) error

type UnaryClientInterceptor func(ctx context.Context, method string, req, reply any, cc *ClientConn, invoker UnaryInvoker, opts ...CallOption) error

func NewClient(target string, opts ...DialOption) (*ClientConn, error) { return &ClientConn{}, nil }
func Dial(target string, opts ...DialOption) (*ClientConn, error)      { return &ClientConn{}, nil }

func WithDefaultServiceConfig(s string) DialOption                      { return dialOption{} }
func WithDisableRetry() DialOption                                      { return dialOption{} }
func WithUnaryInterceptor(f UnaryClientInterceptor) DialOption          { return dialOption{} }
func WithChainUnaryInterceptor(fs ...UnaryClientInterceptor) DialOption { return dialOption{} }
