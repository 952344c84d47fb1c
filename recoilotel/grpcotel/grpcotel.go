// Package grpcotel traces each attempt of a retried gRPC call as one
// CLIENT span under the caller's span, with the RPC semantic conventions:
// rpc.system, rpc.service, rpc.method, server.address, server.port,
// rpc.grpc.status_code, and error.type when the status is not OK.
//
// Its interceptors belong inside the retrying interceptor, so that they
// run once per attempt:
//
//	conn, err := grpc.NewClient(target,
//		grpc.WithChainUnaryInterceptor(retrying, grpcotel.UnaryClientInterceptor()),
//		grpc.WithChainStreamInterceptor(retryingStream, grpcotel.StreamClientInterceptor()))
//
// A resend is marked by the metadata the retrying layer sends with it, kept
// as the semantic conventions' request-metadata attributes:
// grpc-previous-rpc-attempts (gRFC A6: 1 on the second attempt, 2 on the
// third; absent on the first) as
// rpc.grpc.request.metadata.grpc-previous-rpc-attempts, and the hop
// protocol's recoil-attempt as rpc.grpc.request.metadata.recoil-attempt.
// The waits between attempts are events on the caller's span, added by
// recoilotel.Observer as the policy's OnAttempt hook.
//
// It is a package of its own so that recoilotel's HTTP users do not build
// gRPC.
package grpcotel

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/recoil-go/recoil/recoilotel"
	"github.com/recoil-go/recoil/recoilotel/internal/config"
)

// Attribute keys of the RPC semantic conventions that attempt spans carry
// (as OpenTelemetry's own gRPC instrumentation writes them).
const (
	SystemKey     = attribute.Key("rpc.system")
	ServiceKey    = attribute.Key("rpc.service")
	MethodKey     = attribute.Key("rpc.method")
	StatusCodeKey = attribute.Key("rpc.grpc.status_code")
	// The general keys, the same as recoilotel's HTTP spans write.
	ServerAddressKey = recoilotel.ServerAddressKey
	ServerPortKey    = recoilotel.ServerPortKey
	ErrorTypeKey     = recoilotel.ErrorTypeKey
	// PreviousAttemptsKey is the gRFC A6 resend count the retrying layer
	// sent, as a request-metadata attribute.
	PreviousAttemptsKey = attribute.Key("rpc.grpc.request.metadata.grpc-previous-rpc-attempts")
	// HopAttemptKey is the hop protocol's attempt number, as a
	// request-metadata attribute.
	HopAttemptKey = attribute.Key("rpc.grpc.request.metadata.recoil-attempt")
)

// resendMetadata are the outgoing metadata keys kept on the span.
var resendMetadata = [...]struct {
	md  string
	key attribute.Key
}{{"grpc-previous-rpc-attempts", PreviousAttemptsKey}, {"recoil-attempt", HopAttemptKey}}

// tracer makes the span of each attempt.
type tracer struct{ spans *config.Attempts }

func newTracer(opts []recoilotel.Option) tracer { return tracer{config.New(opts).Attempts()} }

// UnaryClientInterceptor returns an interceptor that makes one span per
// call it sees — per attempt, placed inside the retrying interceptor. The
// tracer provider and propagator come from opts (the global ones by
// default); the span context goes to the server in the request metadata.
func UnaryClientInterceptor(opts ...recoilotel.Option) grpc.UnaryClientInterceptor {
	t := newTracer(opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		ctx, span := t.start(ctx, method, cc)
		err := invoker(ctx, method, req, reply, cc, callOpts...)
		finish(span, err)
		return err
	}
}

// StreamClientInterceptor returns an interceptor that makes one span per
// stream it sees — per attempt, placed inside the retrying interceptor. The
// span ends when the stream does: when RecvMsg returns an error (io.EOF is
// a success), or after the one response of a stream that is not
// server-streaming. A stream the caller abandons without reading to its
// end leaves its span unended, as it leaves the stream's resources.
func StreamClientInterceptor(opts ...recoilotel.Option) grpc.StreamClientInterceptor {
	t := newTracer(opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		ctx, span := t.start(ctx, method, cc)
		s, err := streamer(ctx, desc, cc, method, callOpts...)
		if err != nil {
			finish(span, err)
			return nil, err
		}
		return &stream{ClientStream: s, span: span, single: !desc.ServerStreams}, nil
	}
}

func (t tracer) start(ctx context.Context, method string, cc *grpc.ClientConn) (context.Context, trace.Span) {
	name := strings.TrimPrefix(method, "/")
	service, m, _ := strings.Cut(name, "/")
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs, SystemKey.String("grpc"), ServiceKey.String(service), MethodKey.String(m))
	if cc != nil {
		if host, port := Target(cc.CanonicalTarget()); host != "" {
			attrs = append(attrs, ServerAddressKey.String(host))
			if port > 0 {
				attrs = append(attrs, ServerPortKey.Int(port))
			}
		}
	}
	for _, r := range resendMetadata {
		if v := metadata.ValueFromOutgoingContext(ctx, r.md); len(v) > 0 {
			attrs = append(attrs, r.key.StringSlice(v))
		}
	}
	ctx, span := t.spans.Start(ctx, name, attrs...)
	if t.spans.Injects() {
		var c carrier
		t.spans.Inject(ctx, &c)
		if len(c) > 0 {
			ctx = metadata.AppendToOutgoingContext(ctx, c...)
		}
	}
	return ctx, span
}

// carrier collects what a propagator writes as metadata key-value pairs.
type carrier []string

func (c *carrier) Get(string) string { return "" }
func (c *carrier) Set(k, v string)   { *c = append(*c, strings.ToLower(k), v) }
func (c *carrier) Keys() []string    { return nil }

// finish records the attempt's status and ends its span.
func finish(span trace.Span, err error) {
	st, _ := status.FromError(err)
	span.SetAttributes(StatusCodeKey.Int(int(st.Code())))
	if st.Code() != codes.OK {
		span.SetAttributes(ErrorTypeKey.String(st.Code().String()))
		span.SetStatus(otelcodes.Error, st.Message())
	}
	span.End()
}

// stream ends its span when the stream ends.
type stream struct {
	grpc.ClientStream
	span   trace.Span
	single bool // one response: the stream ends with it
	once   sync.Once
}

func (s *stream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	switch {
	case err == io.EOF:
		s.end(nil)
	case err != nil:
		s.end(err)
	case s.single:
		s.end(nil)
	}
	return err
}

func (s *stream) end(err error) { s.once.Do(func() { finish(s.span, err) }) }

// Target returns the server's host and port (0 if none is given) from a
// gRPC target: "dns:///api.example.com:443", "passthrough:///host:port",
// "host:port", or a bare name. A Unix socket's target ("unix:///run/x.sock",
// "unix:x.sock", "unix-abstract:name") gives the socket's path or name as
// the host, as OpenTelemetry's server.address does. A target it cannot
// split is returned whole as the host.
func Target(target string) (host string, port int) {
	for _, scheme := range []string{"unix://", "unix:", "unix-abstract:"} {
		if path, ok := strings.CutPrefix(target, scheme); ok {
			return path, 0
		}
	}
	t := target
	if _, rest, ok := strings.Cut(t, "://"); ok {
		authority, endpoint, _ := strings.Cut(rest, "/")
		t = endpoint
		if t == "" {
			t = authority
		}
	}
	h, p, err := net.SplitHostPort(t)
	if err != nil {
		return t, 0
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		return h, 0
	}
	return h, n
}
