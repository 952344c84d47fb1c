package recoilgrpc_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/internal/conformance"
	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// statusOf maps a row's HTTP-ish outcome to what a gRPC server says: 400
// INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404
// NOT_FOUND, 500 INTERNAL (which the harness's Client retries, as a policy
// naming INTERNAL in its retryable set does), 503 UNAVAILABLE, and 429
// RESOURCE_EXHAUSTED, with the server wait as grpc-retry-pushback-ms
// (gRFC A6).
func statusOf(o conformance.Outcome) codes.Code {
	switch o.Status {
	case 400:
		return codes.InvalidArgument
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.NotFound
	case 429:
		return codes.ResourceExhausted
	case 503:
		return codes.Unavailable
	}
	return codes.Internal
}

// statusErr is the error a server answers o with: its status and, when
// the row gives the provider's error code, that code as the reason of a
// google.rpc.ErrorInfo detail — gRPC's way to say what an HTTP API says in
// its error body.
func statusErr(o conformance.Outcome) error {
	st := status.New(statusOf(o), "scripted "+strconv.Itoa(o.Status))
	if o.Code != "" {
		var err error
		if st, err = st.WithDetails(&errdetails.ErrorInfo{Reason: o.Code, Domain: "conformance.test"}); err != nil {
			panic(err)
		}
	}
	return st.Err()
}

// rowContext is the context a row's call is made with: cancelled with
// ErrCallerLeft at the row's CancelAt, carrying its request budget.
func rowContext(t *testing.T, row *conformance.Row) context.Context {
	ctx, cancel := context.WithCancelCause(t.Context())
	t.Cleanup(func() { cancel(nil) })
	if row.CancelAt > 0 {
		stop := time.AfterFunc(row.CancelAt, func() { cancel(conformance.ErrCallerLeft) })
		t.Cleanup(func() { stop.Stop() })
	}
	if row.RequestBudget != nil {
		ctx = hop.WithAccount(ctx, hop.NewAccount(*row.RequestBudget))
	}
	return ctx
}

// rowServer answers each attempt as a row's script says, in the order the
// attempts arrive, and records the target each reached.
type rowServer struct {
	row   *conformance.Row
	p     *recoil.Policy // the row's, for Reached
	seen  atomic.Int32
	mu    sync.Mutex
	route []string // the x-target metadata of each attempt, under a Fallback
}

// arrive counts an attempt and returns its outcome.
func (rs *rowServer) arrive(ctx context.Context) conformance.Outcome {
	if v := metadata.ValueFromIncomingContext(ctx, "x-target"); len(v) > 0 {
		rs.mu.Lock()
		rs.route = append(rs.route, v[0])
		rs.mu.Unlock()
	}
	return rs.row.Reached(int(rs.seen.Add(1)), rs.p)
}

// answer takes o.After (or until the attempt is cancelled) and returns how
// the attempt ends, nil for OK; trailer sets the trailer.
func answer(ctx context.Context, o conformance.Outcome, trailer func(metadata.MD)) error {
	if o.After > 0 {
		t := time.NewTimer(o.After)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	switch o.Kind {
	case conformance.Hang:
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	case conformance.OK:
		return nil
	}
	if o.RetryAfter > 0 {
		trailer(metadata.Pairs(recoilgrpc.PushbackKey, strconv.FormatInt(o.RetryAfter.Milliseconds(), 10)))
	}
	return statusErr(o)
}

// routeTargets gives each target of p's Fallback, if any, a Channel: the
// first on the call's own connection cc, each other on a connection of its
// own to the same server, each naming itself in x-target metadata.
func routeTargets(t *testing.T, p *recoil.Policy, l *testsvc.PipeListener) {
	if p.Fallback == nil {
		return
	}
	for i := range p.Fallback.Targets {
		tg := &p.Fallback.Targets[i]
		var conn grpc.ClientConnInterface // the call's own
		if i > 0 {
			conn = dialPipe(t, l)
		}
		tg.Value = recoilgrpc.NewChannel(conn, metadata.Pairs("x-target", tg.Name))
	}
}

// checkRoute compares the targets the server saw with the row's.
func (rs *rowServer) checkRoute(t *testing.T, p *recoil.Policy) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if got := strings.Join(rs.route, " "); p.Fallback != nil && got != rs.row.Route {
		t.Errorf("the servers saw attempts at %q, want %q", got, rs.row.Route)
	}
	if n := int(rs.seen.Load()); n != rs.row.Attempts {
		t.Errorf("the server saw %d attempts, want %d", n, rs.row.Attempts)
	}
}

// The rows run in testing/synctest bubbles, on virtual time, over
// in-memory connections between grpc-go's own client and server (HTTP/2,
// metadata, cancellation and all): their waits, cut-offs and hedge delays
// are exact however busy the machine, so they run in parallel.

// Every row of the conformance table through the unary interceptor, over
// a real gRPC server that answers each attempt as the row's script says
// (after Outcome.After, for the hedge rows): the same attempts, stop
// reason, error identity and waits as recoil.Do, the HTTP Transport and
// the simulator. A Fallback's targets are Channels, the first on the
// call's own connection and each other on one of its own, and the server
// sees each attempt at the target the row says. The call's error must
// also carry the last attempt's status code when an attempt answered.
func TestConformanceGRPC(t *testing.T) {
	conformance.Run(t, conformance.GRPC, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			rs := &rowServer{row: row, p: p}
			l := servePipe(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				o := rs.arrive(ctx)
				if err := answer(ctx, o, func(md metadata.MD) { grpc.SetTrailer(ctx, md) }); err != nil {
					return nil, err
				}
				return wrapperspb.String("ok"), nil
			}})
			rc := &recoilgrpc.Client{Policy: p, Retryable: []codes.Code{codes.Unavailable, codes.Internal}}
			cc := dialPipe(t, l, grpc.WithUnaryInterceptor(rc.Unary))
			routeTargets(t, p, l)

			ctx := rowContext(t, row)
			got, err := call(ctx, cc, "hello")

			rs.checkRoute(t, p)
			last := conformance.Outcome{Kind: conformance.Hang}
			if row.Attempts > 0 {
				last = row.Next(row.Attempts)
			}
			switch {
			case row.Reason == recoil.ReasonNone && (err != nil || got != "ok"):
				t.Errorf("call = %q, %v; want ok", got, err)
			case row.Reason == recoil.ReasonCanceled && status.Code(err) != codes.Canceled:
				t.Errorf("status.Code(err) = %v, want Canceled (err %v)", status.Code(err), err)
			case row.Reason != recoil.ReasonNone && row.Reason != recoil.ReasonCanceled && last.Kind == conformance.Status && status.Code(err) != statusOf(last):
				t.Errorf("status.Code(err) = %v, want the last attempt's %v (err %v)", status.Code(err), statusOf(last), err)
			case row.Attempts == 0 && status.Code(err) != codes.Unavailable:
				t.Errorf("status.Code(err) = %v, want Unavailable for a call stopped before any attempt (err %v)", status.Code(err), err)
			}
		})
	})
}

// Every row again through the stream interceptor: each attempt is a
// bidirectional stream whose server answers as the script says — one
// message for OK, a status (with pushback) before any message, or nothing
// until the attempt is cut — and the caller sends one message, closes,
// and receives. The loop must decide exactly as for a unary call. The
// stream interceptor does not race a stream: it runs a hedge row one
// attempt at a time, which the row's script does not describe, so the row
// is skipped here (TestConformanceGRPC runs it).
func TestConformanceGRPCStream(t *testing.T) {
	conformance.Run(t, conformance.GRPC, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			rs := &rowServer{row: row, p: p}
			l := servePipe(t, &testServer{chat: func(ss grpc.ServerStream) error {
				o := rs.arrive(ss.Context())
				in := new(wrapperspb.StringValue)
				if err := ss.RecvMsg(in); err != nil {
					return err
				}
				if err := answer(ss.Context(), o, ss.SetTrailer); err != nil {
					return err
				}
				return ss.SendMsg(wrapperspb.String("ok"))
			}})
			rc := &recoilgrpc.Client{Policy: p, Retryable: []codes.Code{codes.Unavailable, codes.Internal}}
			cc := dialPipe(t, l, grpc.WithStreamInterceptor(rc.Stream))
			routeTargets(t, p, l)

			ctx := rowContext(t, row)
			if p.Hedge != nil {
				return
			}
			var got string
			cs, err := chat(ctx, cc)
			if err == nil {
				if err = cs.SendMsg(wrapperspb.String("hello")); err == nil {
					cs.CloseSend()
					out := new(wrapperspb.StringValue)
					err = cs.RecvMsg(out)
					got = out.GetValue()
				}
			}
			rs.checkRoute(t, p)
			switch {
			case row.Reason == recoil.ReasonNone && (err != nil || got != "ok"):
				t.Errorf("stream = %q, %v; want ok", got, err)
			case row.Reason == recoil.ReasonCanceled && status.Code(err) != codes.Canceled:
				t.Errorf("status.Code(err) = %v, want Canceled (err %v)", status.Code(err), err)
			case row.Reason != recoil.ReasonNone && err == nil:
				t.Errorf("stream succeeded, want it to stop for %v", row.Reason)
			}
		})
		if p.Hedge != nil {
			t.Skip("the stream interceptor runs a stream one attempt at a time under a Hedge (TestHedgeStreamRunsOneAttemptAtATime); TestConformanceGRPC runs this row")
		}
	})
}
