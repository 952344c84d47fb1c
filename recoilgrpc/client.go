package recoilgrpc

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// DefaultMaxReplayBytes is the most a stream buffers of the messages it has
// sent, to replay them on a retry, when Client.MaxReplayBytes is zero:
// grpc-go's default per-RPC retry buffer, 256 KiB (gRFC A6, "Memory
// Management").
const DefaultMaxReplayBytes = 256 << 10

// Client holds gRPC client interceptors that retry under a recoil.Policy:
// Unary and Stream, for grpc.WithChainUnaryInterceptor and
// grpc.WithChainStreamInterceptor.
//
// They run recoil's one retry loop (recoil.Drive), so every Policy field
// means here what it means in recoil.Do: MaxAttempts, the schedules,
// MaxServerWait, MinAttempt, Unknown, Classify (asked before this
// package's Classify), the budget, Breaker, Limiter (a slot per attempt),
// Timeout, AttemptTimeout, Observe and OnAttempt; Fallback, whose targets'
// attempts go to their Channels (see Channel; FallbackRule moves on from
// UNAVAILABLE too); and, for unary calls, Hedge, whose attempts run at once
// and whose losers are cancelled (see Unary; a stream runs one attempt
// at a time, see Stream). Attempts are classified
// by status code as gRFC A6 does (see Classify): the codes in Retryable
// are retried, a server's pushback (grpc-retry-pushback-ms) or
// google.rpc.RetryInfo is a wait the loop honours and never shortens, and a
// negative or malformed pushback stops retrying. Every retry carries
// grpc-previous-rpc-attempts. No wait starts that cannot finish before the
// context's deadline.
//
// A call whose context carries a hop.Account (the Server interceptors and
// recoilhttp's Middleware put one there) spends its retries from it and
// subtracts the retries that trailers report as spent below; with Hop set,
// every attempt also sends the budget, deadline and attempt number as
// metadata (docs/hop-protocol.md).
//
// A call that gives up returns the *recoil.Error (errors.Is finds the stop
// reason's sentinel; errors.As finds the last attempt's *StatusError), and
// status.Code reads the last attempt's code through it. A call stopped
// before any attempt (an open breaker, a full limiter, a budget that
// refuses the call) returns an error whose status is UNAVAILABLE; a call
// its caller abandoned returns context.Cause(ctx) with the status
// CANCELED or DEADLINE_EXCEEDED.
//
// The zero Client is usable: a default policy of its own (with its own
// retry budget), UNAVAILABLE retried. A Client is safe for concurrent use;
// do not change its fields after first use, and do not copy it.
type Client struct {
	// Policy decides; nil means the Client's own zero Policy, whose budget
	// is shared by every call through this Client.
	Policy *recoil.Policy
	// Retryable is the set of status codes worth another attempt (gRFC A6
	// retryableStatusCodes); nil means DefaultRetryable, UNAVAILABLE alone.
	Retryable []codes.Code
	// Hop, if true, sends the hop protocol's metadata on every attempt:
	// the remaining retry budget for the call tree, the remaining deadline
	// and the attempt number (package hop). Whether or not it is set, a call
	// whose context carries a hop.Account spends its retries from it.
	Hop bool
	// EdgeBudget is the retry budget for the whole call tree when a call's
	// context carries no hop.Account and Hop is set; zero means the
	// policy's MaxAttempts-1, negative means zero (hop.EdgeBudget).
	EdgeBudget int
	// MaxReplayBytes bounds the messages a stream keeps to replay on a
	// retry; zero means DefaultMaxReplayBytes. A stream that has sent more,
	// or has sent a message whose size it cannot tell (neither a
	// proto.Message nor a []byte), is not retried again: it is committed,
	// as gRFC A6 commits an RPC whose buffer is full.
	MaxReplayBytes int
	// Logger receives the one warning of a stacked retry layer: grpc-go's
	// own retryPolicy in the channel's service config for a method this
	// Client also retries, so attempts multiply. Nil means discard.
	Logger *slog.Logger
	// NoStackCheck turns that check off: set it when the channel was
	// dialed with grpc.WithDisableRetry(), which the interceptor cannot see.
	NoStackCheck bool

	own     recoil.Policy
	stacked atomic.Bool // a stacked retry layer has been reported
}

func (c *Client) policy() *recoil.Policy {
	if c.Policy != nil {
		return c.Policy
	}
	return &c.own
}

// account returns the hop.Account the call spends from: the one ctx
// carries (the Server interceptors' or the HTTP Middleware's, serving the
// request this call is for), or at an edge with Hop set a new one. The
// call's driver hands it to the loop (requestBudget).
func (c *Client) account(ctx context.Context, p *recoil.Policy) *hop.Account {
	a := hop.AccountFrom(ctx)
	if a == nil && c.Hop {
		a = hop.NewAccount(hop.EdgeBudget(c.EdgeBudget, p.MaxRetries()))
	}
	return a
}

// requestBudget is a call's request budget for the loop: a, or none.
func requestBudget(a *hop.Account) recoil.Budget {
	if a == nil {
		return nil
	}
	return a
}

// checkStacked warns once when the channel's service config gives method
// a retryPolicy of grpc-go's own: two retry layers, attempts multiply.
func (c *Client) checkStacked(ctx context.Context, cc *grpc.ClientConn, method string) {
	if c.NoStackCheck || cc == nil || c.stacked.Load() {
		return
	}
	if cc.GetMethodConfig(method).RetryPolicy == nil || !c.stacked.CompareAndSwap(false, true) {
		return
	}
	if c.Logger != nil {
		c.Logger.LogAttrs(ctx, slog.LevelWarn, "recoilgrpc: two retry layers: attempts multiply",
			slog.String("method", method),
			slog.String("note", "the channel's service config has a retryPolicy, so grpc-go retries too; remove it, or dial with grpc.WithDisableRetry() and set Client.NoStackCheck"))
	}
}

// outgoing returns ctx with the metadata attempt n sends: the hop
// protocol's, when Hop is set, and grpc-previous-rpc-attempts on a retry.
// deadline is the attempt's own cut-off, if any.
func (c *Client) outgoing(ctx context.Context, acct *hop.Account, n int, deadline time.Time) context.Context {
	hopOn := c.Hop && acct != nil
	if n <= 1 && !hopOn {
		return ctx
	}
	md, ok := metadata.FromOutgoingContext(ctx) // a copy: ours to write
	if !ok {
		md = make(metadata.MD, 4)
	}
	if hopOn {
		h := hop.Request{Budget: acct.Remaining(), HasBudget: true, Attempt: n}
		if dl, ok := ctx.Deadline(); ok {
			h.Deadline, h.HasDeadline = max(time.Until(dl), 0), true
		}
		if !deadline.IsZero() && (!h.HasDeadline || time.Until(deadline) < h.Deadline) {
			h.Deadline, h.HasDeadline = max(time.Until(deadline), 0), true
		}
		h.Write(hop.Metadata(md))
	}
	if n > 1 {
		md[PreviousAttemptsKey] = []string{strconv.Itoa(n - 1)}
	} else {
		delete(md, PreviousAttemptsKey) // a stale value from a forwarded context
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// Unary is a grpc.UnaryClientInterceptor: it makes the call under the
// Client's policy, retrying as the type's documentation says. Under a
// policy with a Fallback each attempt goes to its target's Channel; under a
// Hedge the attempts run at once, each decoding into a reply of its own,
// and the winner's reply, header, trailer and peer are the caller's.
func (c *Client) Unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if routed(ctx) {
		// An attempt another Client sent to this channel: that Client
		// retries it, not this one.
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	p := c.policy()
	c.checkStacked(ctx, cc, method)
	u := unaries.Get().(*unary)
	u.c, u.method, u.req, u.reply, u.cc, u.invoker, u.opts = c, method, req, reply, cc, invoker, opts
	u.acct = c.account(ctx, p)
	if p.Hedge != nil {
		u.hedge()
	}
	r, err := recoil.Drive(ctx, p, u)
	if u.hedged {
		u.deliver(r, err == nil)
	}
	*u = unary{} // hold nothing of the call's while pooled
	unaries.Put(u)
	return callError(ctx, err)
}

// unaries recycles the drivers of unary calls: the healthy path then
// allocates nothing of its own.
var unaries = sync.Pool{New: func() any { return new(unary) }}

// callError gives the error a call ends with a gRPC status when it has
// none of its own.
func callError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var re *recoil.Error
	switch {
	case errors.As(err, &re):
		return &codedError{err: err, code: codes.Unavailable}
	case ctx.Err() != nil:
		return &codedError{err: err, code: status.FromContextError(ctx.Err()).Code()}
	}
	return err
}

// codedError gives an error without a gRPC status one, for status.FromError.
type codedError struct {
	err  error
	code codes.Code
}

func (e *codedError) Error() string              { return e.err.Error() }
func (e *codedError) Unwrap() error              { return e.err }
func (e *codedError) GRPCStatus() *status.Status { return status.New(e.code, e.err.Error()) }

// unary is one unary call: the driver of its attempts for recoil.Drive.
type unary struct {
	c          *Client
	method     string
	req, reply any
	cc         *grpc.ClientConn
	invoker    grpc.UnaryInvoker
	opts       []grpc.CallOption
	acct       *hop.Account
	optBuf     [4]grpc.CallOption
	one        result // the attempt's, while attempts run one at a time

	// Under a Hedge, attempts run at once: each has a result of its own,
	// and what grpc-go would write to the caller's memory is written once,
	// from the winner (deliver).
	hedged  bool
	hopts   []grpc.CallOption // the caller's options, less those written from the winner
	header  *metadata.MD      // the caller's grpc.Header, if any
	trailer *metadata.MD      // the caller's grpc.Trailer, if any
	peer    *peer.Peer        // the caller's grpc.Peer, if any
}

// result is one attempt's: what Verdict reads, and under a Hedge what the
// caller gets if the attempt wins.
type result struct {
	trailer metadata.MD
	header  metadata.MD // under a Hedge, when the caller asked for it
	peer    peer.Peer   // likewise
	reply   any         // what the attempt decoded into
	cut     bool        // it ran out of the loop's time (AttemptTimeout or Timeout)
}

// hedge readies the call for attempts at once: the caller's options that
// write to its memory are set aside, to be written from the winner, and an
// OnFinish callback is called by one attempt at a time.
func (u *unary) hedge() {
	u.hedged = true
	u.hopts = make([]grpc.CallOption, 0, len(u.opts))
	var mu sync.Mutex
	for _, o := range u.opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			u.header = o.HeaderAddr
		case grpc.TrailerCallOption:
			u.trailer = o.TrailerAddr
		case grpc.PeerCallOption:
			u.peer = o.PeerAddr
		case grpc.OnFinishCallOption:
			f := o.OnFinish
			u.hopts = append(u.hopts, grpc.OnFinish(func(err error) {
				mu.Lock()
				defer mu.Unlock()
				f(err)
			}))
		default:
			u.hopts = append(u.hopts, o)
		}
	}
}

// deliver gives the caller what the hedged call ended with: the winner's
// reply, and the header, trailer and peer of r, the attempt the call ended
// on (nil if none).
func (u *unary) deliver(r *result, won bool) {
	if r == nil {
		return
	}
	if won && r.reply != u.reply {
		copyReply(u.reply, r.reply)
	}
	if u.header != nil {
		*u.header = r.header
	}
	if u.trailer != nil {
		*u.trailer = r.trailer
	}
	if u.peer != nil {
		*u.peer = r.peer
	}
}

// Attempt invokes attempt n on the call's own connection.
func (u *unary) Attempt(ctx context.Context, n int, deadline time.Time) (*result, error) {
	return u.AttemptTo(ctx, n, nil, deadline)
}

// AttemptTo invokes attempt n on t's Channel (see Channel), cut off at
// deadline when that comes before ctx's own deadline. Under a Hedge it is
// called for several attempts at once: the first decodes into the
// caller's reply, every other into a reply of its own.
func (u *unary) AttemptTo(ctx context.Context, n int, t *recoil.Target, deadline time.Time) (*result, error) {
	actx, own := ctx, false
	if !deadline.IsZero() {
		if dl, ok := ctx.Deadline(); !ok || deadline.Before(dl) {
			var cancel context.CancelFunc
			actx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
			own = true
		}
	}
	r := &u.one
	if u.hedged {
		r = &result{reply: u.reply}
		if n > 1 {
			r.reply = newReply(u.reply)
		}
	} else {
		*r = result{reply: u.reply}
	}
	actx = u.c.outgoing(actx, u.acct, n, deadline)
	var (
		conn grpc.ClientConnInterface
		opts []grpc.CallOption
	)
	ch := channelOf(t)
	switch {
	case ch == nil && !u.hedged:
		// The trailer carries the pushback and the retries spent below.
		opts = append(append(u.optBuf[:0], u.opts...), grpc.Trailer(&r.trailer))
	default:
		base := u.opts
		if u.hedged {
			base = u.hopts
		}
		if ch == nil {
			ch = &ownChannel
		}
		actx, conn, opts = ch.prepare(actx, u.cc, base, 3)
		if cc, ok := conn.(*grpc.ClientConn); ok {
			u.c.checkStacked(ctx, cc, u.method)
		}
		opts = append(opts, grpc.Trailer(&r.trailer))
		if u.header != nil {
			opts = append(opts, grpc.Header(&r.header))
		}
		if u.peer != nil {
			opts = append(opts, grpc.Peer(&r.peer))
		}
	}
	var err error
	if conn == nil {
		err = u.invoker(actx, u.method, u.req, r.reply, u.cc, opts...)
	} else {
		err = conn.Invoke(actx, u.method, u.req, r.reply, opts...)
	}
	// The server may see the deadline (grpc-timeout) pass before the
	// client's timer does: either way the attempt ran out of its own time.
	r.cut = err != nil && own && ctx.Err() == nil && (actx.Err() != nil || status.Code(err) == codes.DeadlineExceeded)
	return r, err
}

// ownChannel is the call's own connection with nothing added.
var ownChannel Channel

// RequestBudget returns the call's hop account, if any.
func (u *unary) RequestBudget() recoil.Budget { return requestBudget(u.acct) }

// Verdict reads the attempt's trailer (the retries spent below, the
// server's pushback) and classifies a failure once: the policy's Classify,
// then the package's (see Classify), then the built-in rules. A unary
// request can always be sent again: no guard.
func (u *unary) Verdict(p *recoil.Policy, r *result, err error) (recoil.Verdict, error) {
	var back hop.Response
	if len(r.trailer) > 0 {
		back, _ = hop.ParseResponse(hop.Metadata(r.trailer)) // malformed fields read as absent
		if u.acct != nil {
			u.acct.Below(back.Spent)
		}
	}
	if err == nil {
		return recoil.Verdict{}, nil
	}
	v, f := failure(err, r.trailer, back, r.cut, u.c.Retryable)
	return p.Verdict(f, v), f
}

// failure is the package's verdict on an attempt that failed with err, and
// the error to record it with.
func failure(err error, trailer metadata.MD, back hop.Response, cut bool, retryable []codes.Code) (recoil.Verdict, error) {
	se := statusError(err, trailer, back)
	if se == nil {
		return recoil.Verdict{}, err // no status: the built-in rules decide
	}
	se.AttemptTimeout = cut
	return se.verdict(retryable), se
}

// Discard does nothing: a failed attempt holds nothing to release.
func (u *unary) Discard(*result) {}

// newReply returns an empty reply of reply's type, for a hedge to decode
// into: a new message of a proto.Message's type, a new value of a
// pointer's. Anything else, which no codec can decode into, is reply
// itself.
func newReply(reply any) any {
	if m, ok := reply.(proto.Message); ok {
		return m.ProtoReflect().New().Interface()
	}
	if v := reflect.ValueOf(reply); v.Kind() == reflect.Pointer {
		return reflect.New(v.Type().Elem()).Interface()
	}
	return reply
}

// copyReply makes dst, the caller's reply, what src decoded: a proto
// message is reset and merged (what unmarshalling into it gives), any
// other pointer's value is set.
func copyReply(dst, src any) {
	if d, ok := dst.(proto.Message); ok {
		if s, ok := src.(proto.Message); ok && d.ProtoReflect().IsValid() {
			proto.Reset(d)
			proto.Merge(d, s)
		}
		return
	}
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if dv.Kind() == reflect.Pointer && !dv.IsNil() && sv.Type() == dv.Type() && !sv.IsNil() {
		dv.Elem().Set(sv.Elem())
	}
}
