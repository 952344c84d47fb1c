package recoilgrpc_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/internal/conformance"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// statusOf maps a row's HTTP-ish outcome to what a gRPC server says: 400
// INVALID_ARGUMENT, 404 NOT_FOUND, 500 INTERNAL (which the harness's Client
// retries, as a policy naming INTERNAL in its retryable set does), 503
// UNAVAILABLE, and 429 RESOURCE_EXHAUSTED, with the server wait as
// grpc-retry-pushback-ms (gRFC A6).
func statusOf(o conformance.Outcome) codes.Code {
	switch o.Status {
	case 400:
		return codes.InvalidArgument
	case 404:
		return codes.NotFound
	case 429:
		return codes.ResourceExhausted
	case 503:
		return codes.Unavailable
	}
	return codes.Internal
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

// The rows run one after another, not in parallel: their timings are tens
// of milliseconds, and forty gRPC servers and clients at once under the
// race detector on a small machine miss them.

// Every row of the conformance table through the unary interceptor, over
// a real gRPC server on loopback that answers each attempt as the row's
// script says: the same attempts, stop reason, error identity and waits as
// recoil.Do, the HTTP Transport and the simulator. The call's error must
// also carry the last attempt's status code when an attempt answered.
func TestConformanceGRPC(t *testing.T) {
	conformance.Run(t, conformance.GRPC, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		var seen atomic.Int32
		addr := serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
			o := row.Next(int(seen.Add(1)))
			switch o.Kind {
			case conformance.Hang:
				<-ctx.Done()
				return nil, status.FromContextError(ctx.Err()).Err()
			case conformance.OK:
				return wrapperspb.String("ok"), nil
			}
			if o.RetryAfter > 0 {
				grpc.SetTrailer(ctx, metadata.Pairs(recoilgrpc.PushbackKey, strconv.FormatInt(o.RetryAfter.Milliseconds(), 10)))
			}
			return nil, status.Error(statusOf(o), "scripted "+strconv.Itoa(o.Status))
		}})
		rc := &recoilgrpc.Client{Policy: p, Retryable: []codes.Code{codes.Unavailable, codes.Internal}}
		cc := dial(t, addr, grpc.WithUnaryInterceptor(rc.Unary))

		ctx := rowContext(t, row)
		got, err := call(ctx, cc, "hello")

		if n := int(seen.Load()); n != row.Attempts {
			t.Errorf("the server saw %d attempts, want %d", n, row.Attempts)
		}
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
}

// Every row again through the stream interceptor: each attempt is a
// bidirectional stream whose server answers as the script says — one
// message for OK, a status (with pushback) before any message, or nothing
// until the attempt is cut — and the caller sends one message, closes,
// and receives. The loop must decide exactly as for a unary call.
func TestConformanceGRPCStream(t *testing.T) {
	conformance.Run(t, conformance.GRPC, func(t *testing.T, row *conformance.Row, p *recoil.Policy) {
		var seen atomic.Int32
		addr := serve(t, &testServer{chat: func(ss grpc.ServerStream) error {
			o := row.Next(int(seen.Add(1)))
			in := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(in); err != nil {
				return err
			}
			switch o.Kind {
			case conformance.Hang:
				<-ss.Context().Done()
				return status.FromContextError(ss.Context().Err()).Err()
			case conformance.OK:
				return ss.SendMsg(wrapperspb.String("ok"))
			}
			if o.RetryAfter > 0 {
				ss.SetTrailer(metadata.Pairs(recoilgrpc.PushbackKey, strconv.FormatInt(o.RetryAfter.Milliseconds(), 10)))
			}
			return status.Error(statusOf(o), "scripted "+strconv.Itoa(o.Status))
		}})
		rc := &recoilgrpc.Client{Policy: p, Retryable: []codes.Code{codes.Unavailable, codes.Internal}}
		cc := dial(t, addr, grpc.WithStreamInterceptor(rc.Stream))

		ctx := rowContext(t, row)
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
		if n := int(seen.Load()); n != row.Attempts {
			t.Errorf("the server saw %d attempts, want %d", n, row.Attempts)
		}
		switch {
		case row.Reason == recoil.ReasonNone && (err != nil || got != "ok"):
			t.Errorf("stream = %q, %v; want ok", got, err)
		case row.Reason == recoil.ReasonCanceled && status.Code(err) != codes.Canceled:
			t.Errorf("status.Code(err) = %v, want Canceled (err %v)", status.Code(err), err)
		case row.Reason != recoil.ReasonNone && err == nil:
			t.Errorf("stream succeeded, want it to stop for %v", row.Reason)
		}
	})
}
