package grpcotel_test

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/internal/leakcheck"
	"github.com/recoil-go/recoil/recoilotel"
	"github.com/recoil-go/recoil/recoilotel/grpcotel"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// health answers Check with the codes in turn, and keeps each request's
// traceparent metadata.
type health struct {
	healthpb.UnimplementedHealthServer
	mu          sync.Mutex
	codes       []codes.Code
	traceparent []string
}

func (h *health) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	h.mu.Lock()
	n := len(h.traceparent)
	h.traceparent = append(h.traceparent, first(md.Get("traceparent")))
	h.mu.Unlock()
	if c := h.codes[min(n, len(h.codes)-1)]; c != codes.OK {
		return nil, status.Error(c, "try again")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h *health) Watch(_ *healthpb.HealthCheckRequest, s healthpb.Health_WatchServer) error {
	return s.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// retrying is a stand-in for the retrying interceptor: recoil's loop
// around the invoker, sending grpc-previous-rpc-attempts with each resend
// as gRPC's own retries do (gRFC A6).
func retrying(p *recoil.Policy) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		n := 0
		return recoil.Do(ctx, p, func(ctx context.Context) error {
			n++
			if n > 1 {
				ctx = metadata.AppendToOutgoingContext(ctx, "grpc-previous-rpc-attempts", strconv.Itoa(n-1))
			}
			err := invoker(ctx, method, req, reply, cc, opts...)
			switch status.Code(err) {
			case codes.OK:
				return nil
			case codes.Unavailable:
				return recoil.Transient(err)
			default:
				return recoil.Permanent(err)
			}
		})
	}
}

func dial(t *testing.T, h *health, tp trace.TracerProvider, p *recoil.Policy) healthpb.HealthClient {
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, h)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	opts := []recoilotel.Option{recoilotel.WithTracerProvider(tp), recoilotel.WithPropagators(propagation.TraceContext{})}
	conn, err := grpc.NewClient("passthrough:///bufnet:50051",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(retrying(p), grpcotel.UnaryClientInterceptor(opts...)),
		grpc.WithStreamInterceptor(grpcotel.StreamClientInterceptor(opts...)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return healthpb.NewHealthClient(conn)
}

func TestAttemptSpans(t *testing.T) {
	tests := []struct {
		name    string
		codes   []codes.Code
		wantErr codes.Code
	}{
		{"first try", []codes.Code{codes.OK}, codes.OK},
		{"two retries", []codes.Code{codes.Unavailable, codes.Unavailable, codes.OK}, codes.OK},
		{"gives up", []codes.Code{codes.Unavailable, codes.Unavailable, codes.Unavailable}, codes.Unavailable},
		{"permanent", []codes.Code{codes.InvalidArgument}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			h := &health{codes: tt.codes}
			p := &recoil.Policy{Backoff: backoff.Constant(time.Millisecond), Budget: recoil.NoBudget}
			client := dial(t, h, tp, p)

			ctx, parent := tp.Tracer("test").Start(context.Background(), "caller")
			_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
			parent.End()
			if got := status.Code(err); got != tt.wantErr {
				t.Fatalf("Check: %v, want %v", err, tt.wantErr)
			}

			spans := exp.GetSpans()
			if len(spans) != len(tt.codes)+1 {
				t.Fatalf("%d spans, want %d attempts and the caller's", len(spans), len(tt.codes))
			}
			caller := spans[len(spans)-1]
			for i, s := range spans[:len(spans)-1] {
				attrs := attribute.NewSet(s.Attributes...)
				if s.Name != "grpc.health.v1.Health/Check" || s.SpanKind != trace.SpanKindClient {
					t.Errorf("attempt %d: span %q kind %v", i+1, s.Name, s.SpanKind)
				}
				if s.Parent.SpanID() != caller.SpanContext.SpanID() {
					t.Errorf("attempt %d: parent %v, want the caller's span %v", i+1, s.Parent.SpanID(), caller.SpanContext.SpanID())
				}
				prev, ok := attrs.Value(grpcotel.PreviousAttemptsKey)
				if want := []string{strconv.Itoa(i)}; ok != (i > 0) || ok && !slices.Equal(prev.AsStringSlice(), want) {
					t.Errorf("attempt %d: grpc-previous-rpc-attempts = %v (set %v), want %v (set %v)", i+1, prev.AsStringSlice(), ok, want, i > 0)
				}
				code, _ := attrs.Value(grpcotel.StatusCodeKey)
				if code.AsInt64() != int64(tt.codes[i]) {
					t.Errorf("attempt %d: rpc.grpc.status_code = %d, want %d", i+1, code.AsInt64(), tt.codes[i])
				}
				if et, ok := attrs.Value(grpcotel.ErrorTypeKey); ok != (tt.codes[i] != codes.OK) || ok && et.AsString() != tt.codes[i].String() {
					t.Errorf("attempt %d: error.type = %q (set %v), want %v", i+1, et.AsString(), ok, tt.codes[i])
				}
				for k, want := range map[attribute.Key]string{grpcotel.SystemKey: "grpc", grpcotel.ServiceKey: "grpc.health.v1.Health", grpcotel.MethodKey: "Check", grpcotel.ServerAddressKey: "bufnet"} {
					if v, _ := attrs.Value(k); v.AsString() != want {
						t.Errorf("attempt %d: %s = %q, want %q", i+1, k, v.AsString(), want)
					}
				}
				if want := "00-" + s.SpanContext.TraceID().String() + "-" + s.SpanContext.SpanID().String() + "-01"; h.traceparent[i] != want {
					t.Errorf("attempt %d: server saw traceparent %q, want the attempt span's %q", i+1, h.traceparent[i], want)
				}
			}
		})
	}
}

func TestStreamSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	client := dial(t, &health{codes: []codes.Code{codes.OK}}, tp, nil)
	s, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	if len(exp.GetSpans()) != 0 {
		t.Errorf("span ended before the stream did")
	}
	if _, err := s.Recv(); err != io.EOF {
		t.Fatalf("Recv = %v, want io.EOF", err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "grpc.health.v1.Health/Watch" {
		t.Fatalf("spans = %v, want one for Watch", spans)
	}
	set := attribute.NewSet(spans[0].Attributes...)
	if code, ok := set.Value(grpcotel.StatusCodeKey); !ok || code.AsInt64() != 0 {
		t.Errorf("rpc.grpc.status_code = %v (set %v), want 0", code.AsInt64(), ok)
	}
}

func TestTarget(t *testing.T) {
	tests := []struct {
		target string
		host   string
		port   int
	}{
		{"dns:///api.example.com:443", "api.example.com", 443},
		{"dns://8.8.8.8/api.example.com:8443", "api.example.com", 8443},
		{"passthrough:///bufnet", "bufnet", 0},
		{"localhost:50051", "localhost", 50051},
		{"[::1]:9000", "::1", 9000},
		{"unix:///tmp/grpc.sock", "/tmp/grpc.sock", 0},
		{"unix:grpc.sock", "grpc.sock", 0},
		{"unix-abstract:grpc", "grpc", 0},
		{"api.example.com", "api.example.com", 0},
		{"h:99999", "h", 0},
	}
	for _, tt := range tests {
		if host, port := grpcotel.Target(tt.target); host != tt.host || port != tt.port {
			t.Errorf("Target(%q) = %q, %d, want %q, %d", tt.target, host, port, tt.host, tt.port)
		}
	}
}

// FuzzTarget: any target splits without a panic into a host taken from
// it and a port in range.
func FuzzTarget(f *testing.F) {
	f.Add("dns:///api.example.com:443")
	f.Add("unix:@abstract")
	f.Fuzz(func(t *testing.T, target string) {
		host, port := grpcotel.Target(target)
		if port < 0 || port > 65535 {
			t.Fatalf("Target(%q) port %d out of range", target, port)
		}
		if len(host) > len(target) {
			t.Fatalf("Target(%q) host %q longer than the target", target, host)
		}
	})
}
