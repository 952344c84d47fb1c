package recoilgrpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil/internal/testsvc"
)

// The test service, defined without protoc: a hand-written ServiceDesc
// over wrapperspb messages and grpc-go's default proto codec. Call is
// unary; Chat is a bidirectional stream.
const (
	callMethod = "/recoil.test.Test/Call"
	chatMethod = "/recoil.test.Test/Chat"
)

// testServer answers as its functions say.
type testServer struct {
	call func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
	chat func(ss grpc.ServerStream) error
}

var testDesc = grpc.ServiceDesc{
	ServiceName: "recoil.test.Test",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Call",
		Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			h := func(ctx context.Context, req any) (any, error) {
				return srv.(*testServer).call(ctx, req.(*wrapperspb.StringValue))
			}
			if ic == nil {
				return h(ctx, in)
			}
			return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: callMethod}, h)
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Chat",
		ServerStreams: true,
		ClientStreams: true,
		Handler:       func(srv any, ss grpc.ServerStream) error { return srv.(*testServer).chat(ss) },
	}},
}

// serve starts a gRPC server for ts on loopback and returns its address;
// it stops when the test ends.
func serve(t testing.TB, ts *testServer, opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&testDesc, ts)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// dial connects to addr with opts; the connection closes when the test ends.
func dial(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	return dialReady(t, "passthrough:///"+addr, opts...)
}

// servePipe starts a gRPC server for ts on an in-memory listener, for a
// test inside a testing/synctest bubble, where real sockets cannot go; it
// stops when the test ends.
func servePipe(t testing.TB, ts *testServer, opts ...grpc.ServerOption) *testsvc.PipeListener {
	t.Helper()
	l := testsvc.NewPipeListener()
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&testDesc, ts)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return l
}

// dialPipe connects to the server on l with opts, as dial does.
func dialPipe(t testing.TB, l *testsvc.PipeListener, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	dialer := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return l.DialContext(ctx, "pipe", addr) })
	return dialReady(t, "passthrough:///pipe", append([]grpc.DialOption{dialer}, opts...)...)
}

// dialReady connects to target with opts and waits until the connection
// is ready; it closes when the test ends.
func dialReady(t testing.TB, target string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(target, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	// Connect now, so that a test's timings measure calls, not the dial.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc.Connect()
	for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
		if !cc.WaitForStateChange(ctx, s) {
			t.Fatalf("no connection to %s: %v", target, s)
		}
	}
	return cc
}

// call makes one unary call.
func call(ctx context.Context, cc *grpc.ClientConn, s string) (string, error) {
	out := new(wrapperspb.StringValue)
	err := cc.Invoke(ctx, callMethod, wrapperspb.String(s), out)
	return out.GetValue(), err
}

// chat opens the bidirectional stream.
func chat(ctx context.Context, cc *grpc.ClientConn) (grpc.ClientStream, error) {
	return cc.NewStream(ctx, &testDesc.Streams[0], chatMethod)
}
