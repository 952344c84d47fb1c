package grpccodes

import (
	"context"
	"errors"
	"time"

	"example.com/pb"
	"google.golang.org/grpc"
)

type conn struct {
	addr   string
	closed bool
	cc     *grpc.ClientConn
	client pb.GreeterClient
	greet  *pb.HelloReply
}

// redial dials again and opens the first call on the new connection.
func (g *conn) redial(ctx context.Context) error {
	if g.closed {
		return errors.New("client was closed")
	}
	cc, err := grpc.Dial(g.addr)
	if err != nil {
		return err
	}
	g.cc = cc
	reply, err := g.client.SayHello(ctx, &pb.HelloRequest{Name: "hello"})
	if err != nil {
		return err
	}
	g.greet = reply
	return nil
}

// A redial retried on every error: a transport re-established, whose
// errors are the transport's, so not unclassified; the constant 50 ms is
// still jitterless.
//
// case: flag nojitter
func (g *conn) reconnect(ctx context.Context) error {
	var err error
	for i := 0; i < 5; i++ {
		if er := g.redial(ctx); er != nil {
			err = er
			sleepCtx(ctx, 50*time.Millisecond) // want `nojitter: sleepCtx in a retry loop`
			continue
		}
		return nil
	}
	return err
}
