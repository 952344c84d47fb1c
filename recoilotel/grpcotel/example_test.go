package grpcotel_test

import (
	"context"
	"fmt"
	"net"
	"strconv"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/test/bufconn"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilotel"
	"github.com/recoil-go/recoil/recoilotel/grpcotel"
)

// exampleConn serves h in memory and dials it with the interceptors.
func exampleConn(h healthpb.HealthServer, opts ...grpc.DialOption) (healthpb.HealthClient, func()) {
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, h)
	go srv.Serve(lis)
	opts = append(opts,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	conn, err := grpc.NewClient("passthrough:///health.internal:50051", opts...)
	if err != nil {
		panic(err)
	}
	return healthpb.NewHealthClient(conn), func() { conn.Close(); srv.Stop() }
}

func ExampleUnaryClientInterceptor() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	p := &recoil.Policy{Backoff: backoff.Constant(0)}

	// The retrying interceptor first (a stand-in here), the tracing one
	// inside it: it sees, and traces, each attempt.
	client, stop := exampleConn(&health{codes: []codes.Code{codes.Unavailable, codes.OK}},
		grpc.WithChainUnaryInterceptor(retrying(p), grpcotel.UnaryClientInterceptor(recoilotel.WithTracerProvider(tp))))
	defer stop()

	_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println("call:", err)
	for _, s := range spans.GetSpans() {
		code, prev := "", "-"
		for _, a := range s.Attributes {
			switch a.Key {
			case grpcotel.StatusCodeKey:
				code = strconv.FormatInt(a.Value.AsInt64(), 10)
			case grpcotel.PreviousAttemptsKey:
				prev = a.Value.AsStringSlice()[0]
			}
		}
		fmt.Println(s.Name, "status", code, "previous attempts", prev)
	}
	// Output:
	// call: <nil>
	// grpc.health.v1.Health/Check status 14 previous attempts -
	// grpc.health.v1.Health/Check status 0 previous attempts 1
}

func ExampleStreamClientInterceptor() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	client, stop := exampleConn(&health{codes: []codes.Code{codes.OK}},
		grpc.WithChainStreamInterceptor(grpcotel.StreamClientInterceptor(recoilotel.WithTracerProvider(tp))))
	defer stop()

	s, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		if _, err := s.Recv(); err != nil {
			fmt.Println("stream ended:", err)
			break
		}
	}
	fmt.Println(len(spans.GetSpans()), "span:", spans.GetSpans()[0].Name)
	// Output:
	// stream ended: EOF
	// 1 span: grpc.health.v1.Health/Watch
}

// Target splits a gRPC target into the server.address and server.port a
// span reports.
func ExampleTarget() {
	for _, t := range []string{"dns:///api.example.com:443", "passthrough:///10.0.0.7:50051", "payments.internal:8443", "payments", "unix:///run/api.sock"} {
		host, port := grpcotel.Target(t)
		fmt.Printf("%-30s %s %d\n", t, host, port)
	}
	// Output:
	// dns:///api.example.com:443     api.example.com 443
	// passthrough:///10.0.0.7:50051  10.0.0.7 50051
	// payments.internal:8443         payments.internal 8443
	// payments                       payments 0
	// unix:///run/api.sock           /run/api.sock 0
}
