package idemgrpc

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/recoil-go/recoil/idempotency"
)

// MetadataKey is the request metadata that carries the key: the HTTP
// header's name, lower-cased as gRPC metadata is.
const MetadataKey = "idempotency-key"

// PushbackKey is the trailer that says how long to wait before retrying a
// call whose key is in progress, in milliseconds: gRFC A6's server
// pushback.
const PushbackKey = "grpc-retry-pushback-ms"

// typeHeader records, in a stored response, the full name of the reply's
// message type, so a replay can decode it.
const typeHeader = "Grpc-Reply-Type"

// Config configures the interceptor. Zero fields mean their defaults, as
// for idempotency.Config.
type Config struct {
	// Store keeps the keys; nil means a Memory store of the interceptor's
	// own.
	Store idempotency.Store
	// Lease is how long a call holds its key; zero means
	// idempotency.DefaultLease. The handler's context ends with it.
	Lease time.Duration
	// RetryAfter is the pushback sent with Aborted for a key in progress;
	// zero means idempotency.DefaultRetryAfter.
	RetryAfter time.Duration
	// Methods reports whether a method (its full name,
	// "/pkg.Service/Method") is protected; nil means every unary method.
	Methods func(fullMethod string) bool
	// Required makes a protected call without a key InvalidArgument;
	// false lets it through unprotected.
	Required bool
	// Scope names the client a call comes from, so that one client's keys
	// never meet another's; nil means ScopeByCredentials (the call's
	// authorization or x-api-key metadata, or its TLS client
	// certificate). A call whose Scope is "" gets InvalidArgument if it
	// carries a key: a key that cannot be scoped is refused, not shared.
	// Only a hash of the scope reaches the store
	// (idempotency.HashScope). ScopeMetadata scopes by a metadata key of
	// your choice; InsecureSharedScope puts every client in one scope.
	Scope func(ctx context.Context) string
	// MaxKeyLen bounds a key; zero means idempotency.DefaultMaxKeyLen.
	MaxKeyLen int
	// Keep reports whether an outcome with this code is stored; one that
	// is not releases the key. Nil means DefaultKeep.
	Keep func(codes.Code) bool
	// StoreTimeout bounds how long a finished call keeps trying to store
	// its outcome; zero means idempotency.DefaultStoreTimeout.
	StoreTimeout time.Duration
}

// DefaultKeep stores OK and the codes that say the call itself is wrong
// (InvalidArgument, NotFound, AlreadyExists, PermissionDenied,
// FailedPrecondition, OutOfRange, Unimplemented, Unauthenticated), and
// releases the key for the codes that say "nothing was done, try again"
// (Unavailable, ResourceExhausted, Aborted, DeadlineExceeded, Canceled,
// Internal, Unknown, DataLoss) — the HTTP middleware's rule, in gRPC codes.
func DefaultKeep(c codes.Code) bool {
	switch c {
	case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented, codes.Unauthenticated:
		return true
	}
	return false
}

// ScopeMetadata returns a Scope function that scopes keys by the values
// of the named incoming metadata key; a call without it has no scope, and
// a key on it is refused. Use it only for metadata a client cannot set for
// another: a secret of its own, or one your proxy overwrites.
func ScopeMetadata(name string) func(context.Context) string {
	return func(ctx context.Context) string {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get(name); len(v) > 0 {
			return name + ":" + strings.Join(v, "\x00")
		}
		return ""
	}
}

// ScopeByCredentials is the Scope the interceptor uses when Config.Scope
// is nil: the caller's own credentials — the public key of its TLS client
// certificate (the handshake proved it holds the private key), every
// authorization value and every x-api-key value of its metadata —
// combined by idempotency.CredentialScope, as the HTTP Middleware's
// default combines the same three. It returns "" when the call carries
// none of them.
//
// A client that sends its retry with a new token is a new scope; scope by
// the account your authentication resolves to keep keys across token
// refreshes.
func ScopeByCredentials(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	var cert *x509.Certificate
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.PeerCertificates) > 0 {
			cert = ti.State.PeerCertificates[0]
		}
	}
	return idempotency.CredentialScope(cert, md.Get("authorization"), md.Get("x-api-key"))
}

// InsecureSharedScope puts every client's keys in one scope. Set it as
// Config.Scope only when every client is trusted and every key random:
// under it, a client that reuses or guesses another's key is replayed the
// other's outcome, and a client whose key another used first is refused
// with FailedPrecondition, which tells it the key exists.
func InsecureSharedScope(context.Context) string { return "*shared*" }

// UnaryServerInterceptor returns an interceptor that makes a retried unary
// call a no-op: the idempotency.Middleware's rules in gRPC terms. For a
// protected call with an idempotency-key:
//
//   - the first call under the key runs the handler, and its outcome —
//     the reply, or the error's status with its details — is stored before
//     the client gets it;
//   - a call under a finished key gets the stored outcome; the handler
//     does not run;
//   - a call under a key still running gets Aborted with a pushback
//     trailer (grpc-retry-pushback-ms);
//   - a key reused with another method or request message gets
//     FailedPrecondition;
//   - a missing key (when Required) or a malformed one gets
//     InvalidArgument, a store that fails Unavailable (the handler does
//     not run), an outcome that could not be stored Internal.
//
// The request's fingerprint is its method and its deterministic protobuf
// encoding. A reply is replayed by decoding the stored bytes into a new
// message of its type, which must be in the global protobuf registry (as
// every generated type is). The bad config it reports is a negative
// duration or bound.
func UnaryServerInterceptor(cfg Config) (grpc.UnaryServerInterceptor, error) {
	for _, f := range []struct {
		name     string
		negative bool
	}{{"Lease", cfg.Lease < 0}, {"RetryAfter", cfg.RetryAfter < 0}, {"MaxKeyLen", cfg.MaxKeyLen < 0}, {"StoreTimeout", cfg.StoreTimeout < 0}} {
		if f.negative {
			return nil, errors.New("idemgrpc: Config." + f.name + " is negative")
		}
	}
	if cfg.Store == nil {
		cfg.Store, _ = idempotency.NewMemory(idempotency.MemoryConfig{})
	}
	if cfg.Lease == 0 {
		cfg.Lease = idempotency.DefaultLease
	}
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = idempotency.DefaultRetryAfter
	}
	if cfg.Keep == nil {
		cfg.Keep = DefaultKeep
	}
	if cfg.Scope == nil {
		cfg.Scope = ScopeByCredentials
	}
	if cfg.StoreTimeout == 0 {
		cfg.StoreTimeout = idempotency.DefaultStoreTimeout
	}
	return (&interceptor{cfg}).unary, nil
}

type interceptor struct{ cfg Config }

func (i *interceptor) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if i.cfg.Methods != nil && !i.cfg.Methods(info.FullMethod) {
		return handler(ctx, req)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get(MetadataKey)
	if len(values) == 0 {
		if i.cfg.Required {
			return nil, status.Error(codes.InvalidArgument, "idempotency-key is missing: this call must carry one, the same on every retry")
		}
		return handler(ctx, req)
	}
	key, err := idempotency.ParseKey(values, i.cfg.MaxKeyLen)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	msg, ok := req.(proto.Message)
	if !ok {
		return nil, status.Errorf(codes.Internal, "idemgrpc: request of %s is not a protobuf message", info.FullMethod)
	}
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "idemgrpc: request does not encode: %v", err)
	}
	scope := i.cfg.Scope(ctx)
	if scope == "" {
		return nil, status.Error(codes.InvalidArgument, "idempotency-key cannot be scoped: this server keeps each client's keys apart by the client's credentials, and this call carries none; the call was not run")
	}
	scope = idempotency.HashScope(scope)
	b, err := i.cfg.Store.Begin(ctx, scope, key, idempotency.Fingerprint("grpc", info.FullMethod, body), i.cfg.Lease)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "the call was not run: its idempotency key could not be checked (%v)", err)
	}
	switch b.State {
	case idempotency.StateDone:
		return replay(b.Response)
	case idempotency.StateRunning:
		wait := i.cfg.RetryAfter
		if b.RetryIn > 0 {
			wait = min(wait, b.RetryIn)
		}
		_ = grpc.SetTrailer(ctx, metadata.Pairs(PushbackKey, strconv.FormatInt(max(wait.Milliseconds(), 1), 10)))
		return nil, status.Error(codes.Aborted, "a call with this idempotency-key is in progress; retry after it finishes")
	case idempotency.StateMismatch:
		return nil, status.Error(codes.FailedPrecondition, "this idempotency-key was used with a different call (method or request)")
	}
	return i.run(ctx, req, handler, idempotency.Claim{Scope: scope, Key: key, Token: b.Token})
}

// run runs the handler under the claim and stores its outcome.
func (i *interceptor) run(ctx context.Context, req any, handler grpc.UnaryHandler, c idempotency.Claim) (any, error) {
	leaseEnd := time.Now().Add(i.cfg.Lease)
	hctx, cancel := context.WithDeadline(idempotency.WithClaim(ctx, c), leaseEnd)
	reply, herr := handler(hctx, req)
	cancel()
	sctx := context.WithoutCancel(ctx)
	st := status.Convert(herr)
	if !i.cfg.Keep(st.Code()) {
		_ = i.cfg.Store.Release(sctx, c.Scope, c.Key, c.Token)
		return reply, herr
	}
	resp, err := outcome(reply, st)
	if err != nil {
		_ = i.cfg.Store.Release(sctx, c.Scope, c.Key, c.Token)
		return nil, status.Errorf(codes.Internal, "idemgrpc: %v", err)
	}
	deadline := time.Now().Add(i.cfg.StoreTimeout)
	if leaseEnd.Before(deadline) {
		deadline = leaseEnd
	}
	switch err := idempotency.Complete(sctx, i.cfg.Store, c, resp, deadline); {
	case errors.Is(err, idempotency.ErrLeaseLost):
		return nil, status.Error(codes.Internal, "the call ran, but its lease ran out and another call took the key over; its outcome is that call's")
	case err != nil:
		return nil, status.Errorf(codes.Internal, "the call ran, but its outcome could not be stored (%v); the key stays locked until its lease runs out, after which a retry runs the call again", err)
	}
	return reply, herr
}

// outcome encodes a reply or an error status for the store: the code in
// Status, and in Body the reply (its type named in a header) or the
// status with its details.
func outcome(reply any, st *status.Status) (*idempotency.Response, error) {
	if st.Code() != codes.OK {
		body, err := proto.Marshal(st.Proto())
		return &idempotency.Response{Status: int(st.Code()), Body: body}, err
	}
	msg, ok := reply.(proto.Message)
	if !ok {
		return nil, errors.New("reply is not a protobuf message")
	}
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	h := http.Header{typeHeader: {string(msg.ProtoReflect().Descriptor().FullName())}}
	return &idempotency.Response{Status: int(codes.OK), Header: h, Body: body}, err
}

// replay decodes a stored outcome.
func replay(r *idempotency.Response) (any, error) {
	if codes.Code(r.Status) != codes.OK {
		var sp spb.Status
		if err := proto.Unmarshal(r.Body, &sp); err != nil {
			return nil, status.Errorf(codes.Internal, "idemgrpc: stored status does not decode: %v", err)
		}
		return nil, status.FromProto(&sp).Err()
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(r.Header.Get(typeHeader)))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "idemgrpc: stored reply type %q: %v", r.Header.Get(typeHeader), err)
	}
	msg := mt.New().Interface()
	if err := proto.Unmarshal(r.Body, msg); err != nil {
		return nil, status.Errorf(codes.Internal, "idemgrpc: stored reply does not decode: %v", err)
	}
	return msg, nil
}
