package recoilgrpc

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/recoil-go/recoil"
)

// A Channel is where the Client's interceptors send the attempts that a
// policy's Fallback routes to one target: a connection, the metadata that
// carries the target's credentials, and call options of its own (its
// grpc.PerRPCCredentials, say). Make one with NewChannel and set it as the
// recoil.Target's Value (NewTarget does both). A target whose Value is a
// *grpc.ClientConn, or any other grpc.ClientConnInterface, is a Channel on
// that connection with nothing added; a target whose Value is anything
// else, nil among them, gets the attempt on the call's own connection as
// its caller made it.
//
// With a Fallback of Channels, one Client falls back across connections —
// another region, another cluster, another key — with no change to the
// calling code:
//
//   - the connection: an attempt to the call's own connection (a nil
//     conn, or the one the call was made on) goes down the rest of the
//     interceptor chain, as without a Fallback; an attempt to another is
//     invoked on it (Invoke, NewStream), through that channel's own
//     interceptors, credentials, load balancing and service config. A
//     Client's interceptors there pass it straight through, so attempts
//     do not multiply;
//   - the credentials: the caller's own — its grpc.PerRPCCredentials call
//     options and the outgoing metadata keys authorization,
//     proxy-authorization, cookie, x-api-key and api-key — are sent only
//     to a target on the call's own connection, or on a *grpc.ClientConn
//     to the same canonical target, never to another, as recoilhttp's
//     Transport never sends them to another host; then the Channel's
//     metadata is set, replacing any of the same key, and its call options
//     are added after the caller's, so its credentials win;
//   - the request: the same message is sent to every target, so the
//     targets must serve the same method with the same messages.
//
// A Channel is immutable and safe for concurrent use; it does not own its
// connection, which its maker closes.
type Channel struct {
	conn grpc.ClientConnInterface
	md   metadata.MD
	opts []grpc.CallOption
}

// NewChannel returns the Channel of a target reached on conn (nil: the
// call's own connection), sending md as metadata on every attempt,
// replacing the caller's keys of the same name, and adding opts to the
// caller's call options.
func NewChannel(conn grpc.ClientConnInterface, md metadata.MD, opts ...grpc.CallOption) *Channel {
	own := make(metadata.MD, len(md))
	for k, v := range md {
		own[strings.ToLower(k)] = append([]string(nil), v...)
	}
	return &Channel{conn: conn, md: own, opts: append([]grpc.CallOption(nil), opts...)}
}

// NewTarget returns a recoil.Target named name whose attempts go to
// NewChannel(conn, md, opts...).
func NewTarget(name string, conn grpc.ClientConnInterface, md metadata.MD, opts ...grpc.CallOption) recoil.Target {
	return recoil.Target{Name: name, Value: NewChannel(conn, md, opts...)}
}

// Conn returns the channel's connection; nil for the call's own.
func (ch *Channel) Conn() grpc.ClientConnInterface { return ch.conn }

// channelOf returns the Channel an attempt to t goes to; nil for the
// call's own connection as its caller made it.
func channelOf(t *recoil.Target) *Channel {
	if t == nil {
		return nil
	}
	switch v := t.Value.(type) {
	case *Channel:
		return v // nil for a nil *Channel
	case *grpc.ClientConn:
		if v == nil {
			return nil
		}
		return &Channel{conn: v}
	case grpc.ClientConnInterface:
		return &Channel{conn: v}
	}
	return nil
}

// credentialKeys are the outgoing metadata keys never sent to a target on
// another origin than the call's.
var credentialKeys = [...]string{"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"}

// routedKey marks the context of an attempt a Client sends to another
// connection: that connection's Client interceptors, if any, pass it
// through.
type routedKey struct{}

// routed reports whether ctx is an attempt a Client routed here.
func routed(ctx context.Context) bool {
	_, ok := ctx.Value(routedKey{}).(struct{})
	return ok
}

// prepare readies an attempt to ch made under ctx with the caller's call
// options opts, for a call made on own: it returns the attempt's context
// and options (with room for extra more), and the connection to invoke
// it on — nil for own, down the rest of the interceptor chain.
func (ch *Channel) prepare(ctx context.Context, own *grpc.ClientConn, opts []grpc.CallOption, extra int) (context.Context, grpc.ClientConnInterface, []grpc.CallOption) {
	conn := ch.conn
	if cc, ok := conn.(*grpc.ClientConn); ok && cc == own {
		conn = nil
	}
	keep := conn == nil // the caller's credentials may go
	if cc, ok := conn.(*grpc.ClientConn); ok && own != nil && cc.CanonicalTarget() == own.CanonicalTarget() {
		keep = true
	}
	out := make([]grpc.CallOption, 0, len(opts)+len(ch.opts)+extra)
	for _, o := range opts {
		if _, creds := o.(grpc.PerRPCCredsCallOption); creds && !keep {
			continue
		}
		out = append(out, o)
	}
	out = append(out, ch.opts...)
	if !keep || len(ch.md) > 0 {
		md, _ := metadata.FromOutgoingContext(ctx) // a copy: ours to write
		if md == nil {
			md = make(metadata.MD, len(ch.md))
		}
		if !keep {
			for _, k := range credentialKeys {
				delete(md, k)
			}
		}
		for k, v := range ch.md {
			md[k] = v
		}
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	if conn != nil {
		ctx = context.WithValue(ctx, routedKey{}, struct{}{})
	}
	return ctx, conn, out
}

// FallbackRule is a recoil.FallbackRule for a Fallback across gRPC
// channels. It is recoil.DefaultFallbackRule (NOT_FOUND, UNAUTHENTICATED,
// PERMISSION_DENIED, a message too large and a throttled
// RESOURCE_EXHAUSTED move on as their HTTP equivalents do; see Classify),
// and besides:
//
//   - UNAVAILABLE (CodeUnavailable) — a channel that cannot connect, a
//     server draining or shedding load: gRPC's HTTP 503 — moves on, and
//     cools the target for the server's wait or the cooldown, whichever is
//     longer, as an overloaded HTTP target does. gRFC A6 makes it
//     transient, so DefaultFallbackRule retries it on the same target;
//   - RESOURCE_EXHAUSTED without pushback (CodeResourceExhausted) — a
//     quota or a limit not lifted by waiting on this target now, but not
//     known to be spent for good — moves on and cools the target likewise,
//     rather than keep it out until Fallback.Restore.
//
// When no target is left to move to, either is decided as without a
// Fallback: UNAVAILABLE is retried where it is, RESOURCE_EXHAUSTED stops.
// Set it as the Fallback's Rule.
func FallbackRule(v recoil.Verdict, cooldown time.Duration) recoil.Leave {
	switch {
	case v.Class == recoil.ClassCanceled:
	case strings.EqualFold(v.Code, CodeUnavailable):
		return recoil.Leave{Move: true, Cool: max(v.Wait, cooldown), Why: "unavailable"}
	case strings.EqualFold(v.Code, CodeResourceExhausted):
		return recoil.Leave{Move: true, Cool: max(v.Wait, cooldown), Why: "resource exhausted"}
	}
	return recoil.DefaultFallbackRule(v, cooldown)
}
