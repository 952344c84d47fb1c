package idemgrpc_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil/internal/leakcheck"
	"github.com/recoil-go/recoil/recoilgrpc/idemgrpc"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

const method = "/recoil.test.Charges/Charge"

// chargeFunc is the test service's one method.
type chargeFunc func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error)

// serve runs a gRPC server with the interceptor in front of charge, over an
// in-memory listener, and returns a client connection.
func serve(t *testing.T, cfg idemgrpc.Config, charge chargeFunc) *grpc.ClientConn {
	t.Helper()
	idem, err := idemgrpc.UnaryServerInterceptor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(idem))
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "recoil.test.Charges",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Charge", Handler: func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			h := func(ctx context.Context, req any) (any, error) { return charge(ctx, req.(*wrapperspb.StringValue)) }
			return ic(ctx, in, &grpc.UnaryServerInfo{FullMethod: method}, h)
		}}},
	}, struct{}{})
	ln := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(ln) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
	})
	return conn
}

// call invokes the method as the client "Bearer client-a" with a key
// (none if empty) and returns the reply's value, the trailer and the
// error.
func call(t *testing.T, conn *grpc.ClientConn, key, in string) (string, metadata.MD, error) {
	return callAs(t, conn, []string{"authorization", "Bearer client-a"}, key, in)
}

// callAs is call with the metadata given instead of the default
// credentials.
func callAs(t *testing.T, conn *grpc.ClientConn, md []string, key, in string) (string, metadata.MD, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, md...)
	if key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, idemgrpc.MetadataKey, key)
	}
	out := new(wrapperspb.StringValue)
	var trailer metadata.MD
	err := conn.Invoke(ctx, method, wrapperspb.String(in), out, grpc.Trailer(&trailer))
	return out.GetValue(), trailer, err
}

func TestUnary(t *testing.T) {
	var runs atomic.Int64
	conn := serve(t, idemgrpc.Config{Required: true}, func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		n := runs.Add(1)
		if in.GetValue() == "missing" {
			return nil, status.Errorf(codes.NotFound, "no card %d", n)
		}
		if in.GetValue() == "down" {
			return nil, status.Error(codes.Unavailable, "the bank is down")
		}
		return wrapperspb.String(fmt.Sprintf("charge %d for %s", n, in.GetValue())), nil
	})
	tests := []struct {
		name, key, in string
		want          string
		code          codes.Code
		runs          int64 // the handler's runs after the call
	}{
		{"first call runs", `"k1"`, "100", "charge 1 for 100", codes.OK, 1},
		{"a retry replays", `"k1"`, "100", "charge 1 for 100", codes.OK, 1},
		{"the bare form of the same key", "k1", "100", "charge 1 for 100", codes.OK, 1},
		{"another request under the key", "k1", "999", "", codes.FailedPrecondition, 1},
		{"no key", "", "100", "", codes.InvalidArgument, 1},
		{"malformed key", `"k1`, "100", "", codes.InvalidArgument, 1},
		{"an error is stored", "k2", "missing", "", codes.NotFound, 2},
		{"and replayed, message and all", "k2", "missing", "", codes.NotFound, 2},
		{"a retryable error releases the key", "k3", "down", "", codes.Unavailable, 3},
		{"so the retry runs", "k3", "down", "", codes.Unavailable, 4},
	}
	for _, tt := range tests {
		got, _, err := call(t, conn, tt.key, tt.in)
		if got != tt.want || status.Code(err) != tt.code || runs.Load() != tt.runs {
			t.Fatalf("%s: = %q, %v after %d runs; want %q, %v after %d", tt.name, got, err, runs.Load(), tt.want, tt.code, tt.runs)
		}
		if tt.name == "and replayed, message and all" && status.Convert(err).Message() != "no card 2" {
			t.Fatalf("replayed error = %v, want the stored one's message", err)
		}
	}
}

func TestInProgress(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	conn := serve(t, idemgrpc.Config{RetryAfter: 1500 * time.Millisecond}, func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		close(started)
		<-release
		return wrapperspb.String("done"), nil
	})
	first := make(chan string)
	go func() {
		v, _, _ := call(t, conn, "k", "x")
		first <- v
	}()
	<-started
	_, trailer, err := call(t, conn, "k", "x")
	if status.Code(err) != codes.Aborted || len(trailer.Get(idemgrpc.PushbackKey)) != 1 || trailer.Get(idemgrpc.PushbackKey)[0] != "1500" {
		t.Fatalf("duplicate while running = %v, trailer %v; want Aborted with pushback 1500 ms", err, trailer)
	}
	close(release)
	if v := <-first; v != "done" {
		t.Fatalf("first = %q", v)
	}
	if v, _, err := call(t, conn, "k", "x"); v != "done" || err != nil {
		t.Fatalf("after = %q, %v; want the replay", v, err)
	}
}

// TestConcurrentDuplicates: 100 concurrent calls under one key, each
// retrying after the pushback it is given, run the handler once and all
// get its reply.
func TestConcurrentDuplicates(t *testing.T) {
	var runs atomic.Int64
	conn := serve(t, idemgrpc.Config{RetryAfter: 100 * time.Millisecond}, func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		n := runs.Add(1)
		tm := time.NewTimer(50 * time.Millisecond) // the work's own duration
		<-tm.C
		return wrapperspb.String("charge " + strconv.FormatInt(n, 10)), nil
	})
	const n = 100
	got := make(chan string, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			for {
				v, trailer, err := call(t, conn, "dup", "x")
				if status.Code(err) != codes.Aborted {
					got <- v + fmt.Sprint(err)
					return
				}
				ms, _ := strconv.Atoi(trailer.Get(idemgrpc.PushbackKey)[0])
				tm := time.NewTimer(time.Duration(ms) * time.Millisecond) // the server's pushback
				<-tm.C
			}
		}()
	}
	close(start)
	for range n {
		if v := <-got; v != "charge 1<nil>" {
			t.Fatalf("a duplicate got %q, want charge 1", v)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("runs = %d, want 1", runs.Load())
	}
}

func TestMethodsAndScope(t *testing.T) {
	var runs atomic.Int64
	h := func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		return wrapperspb.String(strconv.FormatInt(runs.Add(1), 10)), nil
	}
	conn := serve(t, idemgrpc.Config{Methods: func(m string) bool { return m != method }}, h)
	a, _, _ := call(t, conn, "k", "x")
	b, _, _ := call(t, conn, "k", "x")
	if a == b {
		t.Fatalf("an unprotected method replayed: %q, %q", a, b)
	}
	scoped := serve(t, idemgrpc.Config{Scope: idemgrpc.ScopeMetadata("x-client")}, h)
	ctx := metadata.AppendToOutgoingContext(context.Background(), idemgrpc.MetadataKey, "k", "x-client", "a")
	out1, out2 := new(wrapperspb.StringValue), new(wrapperspb.StringValue)
	_ = scoped.Invoke(ctx, method, wrapperspb.String("x"), out1)
	ctx = metadata.AppendToOutgoingContext(context.Background(), idemgrpc.MetadataKey, "k", "x-client", "b")
	_ = scoped.Invoke(ctx, method, wrapperspb.String("x"), out2)
	if out1.GetValue() == out2.GetValue() {
		t.Fatalf("two clients' same key shared an outcome: %q", out1.GetValue())
	}
}

// TestScopes: under the default scope two callers' same key is two keys,
// a call without credentials that sends a key is refused, and
// InsecureSharedScope shares.
func TestScopes(t *testing.T) {
	alice := []string{"authorization", "Bearer alice"}
	bob := []string{"x-api-key", "sk-bob"}
	tests := []struct {
		name          string
		scope         func(context.Context) string
		first, second []string
		want          string // the second's reply, or its code
	}{
		{"one caller", nil, alice, alice, "1"},
		{"two callers", nil, alice, bob, "2"},
		{"no credentials", nil, alice, nil, codes.InvalidArgument.String()},
		{"ScopeMetadata, absent", idemgrpc.ScopeMetadata("x-client"), []string{"x-client", "a"}, alice, codes.InvalidArgument.String()},
		{"InsecureSharedScope", idemgrpc.InsecureSharedScope, alice, nil, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			conn := serve(t, idemgrpc.Config{Scope: tt.scope}, func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				return wrapperspb.String(strconv.FormatInt(runs.Add(1), 10)), nil
			})
			if v, _, err := callAs(t, conn, tt.first, "k", "x"); v != "1" || err != nil {
				t.Fatalf("first = %q, %v", v, err)
			}
			v, _, err := callAs(t, conn, tt.second, "k", "x")
			if err != nil {
				v = status.Code(err).String()
			}
			if v != tt.want {
				t.Fatalf("second = %q (%v); want %q", v, err, tt.want)
			}
		})
	}
}

// TestScopeByCredentials: the TLS client certificate's public key is a
// credential (a renewed certificate with the same key is the same
// caller), as are the authorization and x-api-key metadata.
func TestScopeByCredentials(t *testing.T) {
	withCert := func(spki, raw string) context.Context {
		cert := &x509.Certificate{RawSubjectPublicKeyInfo: []byte(spki), Raw: []byte(raw)}
		return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}}})
	}
	withMD := func(kv ...string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(kv...))
	}
	scope := idemgrpc.ScopeByCredentials
	if scope(context.Background()) != "" {
		t.Fatal("a call without credentials has a scope")
	}
	for _, tt := range []struct {
		name string
		a, b context.Context
		same bool
	}{
		{"certificate renewed, same key", withCert("key A", "cert 1"), withCert("key A", "cert 2"), true},
		{"two client keys", withCert("key A", "cert"), withCert("key B", "cert"), false},
		{"two tokens", withMD("authorization", "Bearer a"), withMD("authorization", "Bearer b"), false},
		{"token and API key of one value", withMD("authorization", "k"), withMD("x-api-key", "k"), false},
		{"one API key", withMD("x-api-key", "k"), withMD("x-api-key", "k"), true},
	} {
		a, b := scope(tt.a), scope(tt.b)
		if a == "" || b == "" || (a == b) != tt.same {
			t.Errorf("%s: scopes %q and %q; want same %v", tt.name, a, b, tt.same)
		}
	}
}

func TestConfigRejected(t *testing.T) {
	tests := []struct {
		field string
		cfg   idemgrpc.Config
	}{
		{"Lease", idemgrpc.Config{Lease: -1}}, {"RetryAfter", idemgrpc.Config{RetryAfter: -1}},
		{"MaxKeyLen", idemgrpc.Config{MaxKeyLen: -1}}, {"StoreTimeout", idemgrpc.Config{StoreTimeout: -1}},
	}
	for _, tt := range tests {
		_, err := idemgrpc.UnaryServerInterceptor(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), "Config."+tt.field+" ") {
			t.Errorf("UnaryServerInterceptor(%+v) = %v, want an error naming Config.%s", tt.cfg, err, tt.field)
		}
	}
}
