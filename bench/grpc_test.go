package bench

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// benchDesc is a one-method unary service written without protoc: a
// hand-written ServiceDesc over wrapperspb messages.
var benchDesc = grpc.ServiceDesc{
	ServiceName: "recoil.bench.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			return srv.(*echoServer).echo(in)
		},
	}},
}

const echoMethod = "/recoil.bench.Echo/Echo"

// echoServer answers every request, or (flaky) fails every other one with
// UNAVAILABLE: on one goroutine, each call's first attempt fails and its
// retry succeeds.
type echoServer struct {
	flaky  bool
	served atomic.Int64
}

var errUnavailable = status.Error(codes.Unavailable, "try again")

func (s *echoServer) echo(in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	if n := s.served.Add(1); s.flaky && n%2 == 1 {
		return nil, errUnavailable
	}
	return in, nil
}

// builtinConfig is grpc-go's own retry (gRFC A6) for the service: 3
// attempts, UNAVAILABLE retried, the shortest backoff the config allows.
const builtinConfig = `{"methodConfig":[{"name":[{"service":"recoil.bench.Echo"}],"retryPolicy":{"maxAttempts":3,"initialBackoff":"0.000000001s","maxBackoff":"0.000000001s","backoffMultiplier":1,"retryableStatusCodes":["UNAVAILABLE"]}}]}`

// BenchmarkGRPC makes unary calls to a loopback gRPC server through a
// plain ClientConn and through each retrying client, all allowing 3
// attempts with no wait between them: healthy, where every call succeeds
// at once, and unavailable-then-ok, where every call's first attempt fails
// UNAVAILABLE and its retry succeeds (bare makes the second call itself).
// Each client has its own ClientConn; the server counts requests and each
// sub-benchmark fails unless it saw exactly the attempts expected, and
// each call fails unless it returns the echo.
//
// The server runs in the same process, so B/op, allocs/op and cpu-ns/op
// (the process's CPU time per call, client and server: the work, which
// unlike ns/op does not grow with the queue for a CPU on a shared machine)
// include its side of each request.
func BenchmarkGRPC(b *testing.B) {
	for _, flaky := range []bool{false, true} {
		name := "healthy"
		if flaky {
			name = "unavailable-then-ok"
		}
		b.Run(name, func(b *testing.B) {
			srv := &echoServer{flaky: flaky}
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			gs := grpc.NewServer()
			gs.RegisterService(&benchDesc, srv)
			go gs.Serve(lis)
			defer gs.Stop()
			addr := "passthrough:///" + lis.Addr().String()

			rc := &recoilgrpc.Client{Policy: &recoil.Policy{MaxAttempts: 3, Backoff: backoff.None{},
				OverloadBackoff: backoff.None{}, Budget: recoil.NoBudget}}
			clients := []struct {
				name string
				opts []grpc.DialOption
				// again: the client retries nothing, the benchmark does
				again bool
			}{
				{"bare", []grpc.DialOption{grpc.WithDisableRetry()}, true},
				{"recoil", []grpc.DialOption{grpc.WithDisableRetry(), grpc.WithUnaryInterceptor(rc.Unary)}, false},
				{"grpc-builtin", []grpc.DialOption{grpc.WithDefaultServiceConfig(builtinConfig)}, false},
				{"go-grpc-middleware", []grpc.DialOption{grpc.WithDisableRetry(), grpc.WithUnaryInterceptor(retry.UnaryClientInterceptor(
					retry.WithMax(3), retry.WithCodes(codes.Unavailable),
					retry.WithBackoff(func(context.Context, uint) time.Duration { return 0 })))}, false},
			}
			for _, c := range clients {
				b.Run(c.name, func(b *testing.B) {
					cc, err := grpc.NewClient(addr, append(c.opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
					if err != nil {
						b.Fatal(err)
					}
					defer cc.Close()
					ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
					defer cancel()
					in := wrapperspb.String("ping")
					out := new(wrapperspb.StringValue)
					if err := cc.Invoke(ctx, echoMethod, in, out); err != nil && !c.again { // warm the connection
						b.Fatal(err)
					}
					srv.served.Store(0)
					calls := int64(0)
					b.ReportAllocs()
					cpu0 := cpuTime()
					for b.Loop() {
						err := cc.Invoke(ctx, echoMethod, in, out)
						if err != nil && c.again && status.Code(err) == codes.Unavailable {
							err = cc.Invoke(ctx, echoMethod, in, out)
						}
						if err != nil || out.GetValue() != "ping" {
							b.Fatalf("call: %q, %v", out.GetValue(), err)
						}
						calls++
					}
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(calls), "cpu-ns/op")
					want := calls
					if flaky {
						want *= 2
					}
					if got := srv.served.Load(); got != want {
						b.Fatalf("the server saw %d attempts for %d calls, want %d", got, calls, want)
					}
				})
			}
		})
	}
}
