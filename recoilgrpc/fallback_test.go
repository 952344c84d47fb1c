package recoilgrpc_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// testCreds are per-RPC credentials that send their value as x-creds, over
// an insecure connection.
type testCreds string

func (c testCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"x-creds": string(c)}, nil
}

func (testCreds) RequireTransportSecurity() bool { return false }

// seen is what a server saw of each attempt: the metadata a test reads.
type seen struct {
	mu   sync.Mutex
	reqs []metadata.MD
}

func (s *seen) add(ctx context.Context) int {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, md)
	return len(s.reqs)
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// values returns the values of key in each attempt's metadata, "" where
// absent.
func (s *seen) values(key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.reqs))
	for i, md := range s.reqs {
		out[i] = strings.Join(md.Get(key), ",")
	}
	return out
}

// withReason is a status of code c carrying an ErrorInfo whose reason is
// reason: how a gRPC server names a provider's error code.
func withReason(c codes.Code, reason string) error {
	st, err := status.New(c, "refused").WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: "test"})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

// fallbackPolicy is a policy of three attempts over a Fallback of targets
// with rule, each attempt recorded in route.
func fallbackPolicy(rule recoil.FallbackRule, route *[]string, targets ...recoil.Target) *recoil.Policy {
	var mu sync.Mutex
	return &recoil.Policy{MaxAttempts: 3, Backoff: backoff.Constant(time.Millisecond), Budget: recoil.NoBudget,
		Fallback: &recoil.Fallback{Targets: targets, Rule: rule},
		OnAttempt: func(_ context.Context, e recoil.AttemptEvent) {
			mu.Lock()
			*route = append(*route, e.Target)
			mu.Unlock()
		}}
}

// A call on one channel falls back to another, a real gRPC connection to a
// second server, as the verdict's code says: NOT_FOUND, UNAUTHENTICATED,
// PERMISSION_DENIED and a spent quota move on under DefaultFallbackRule;
// UNAVAILABLE and RESOURCE_EXHAUSTED without pushback move on under
// FallbackRule and stay (retried, or stopped) under the default; a
// validator's INVALID_ARGUMENT stops. Each target is cooled or kept out as
// the rule says, and every attempt counts against the one MaxAttempts.
func TestFallbackChannels(t *testing.T) {
	const (
		in      = "in use"
		cooling = "cooling"
		out     = "out"
	)
	tests := []struct {
		name    string
		rule    recoil.FallbackRule
		primary func(n int) error // the first server's answer to its attempt n; nil is OK
		route   string            // the target of each attempt
		reason  recoil.Reason
		code    codes.Code // the call's, when it fails
		state   string     // the first target's afterwards
	}{
		{name: "NOT_FOUND moves on at once", primary: func(int) error { return status.Error(codes.NotFound, "no such model") },
			route: "primary secondary", state: cooling},
		{name: "UNAUTHENTICATED moves on; the target is out until Restore", primary: func(int) error { return status.Error(codes.Unauthenticated, "bad key") },
			route: "primary secondary", state: out},
		{name: "PERMISSION_DENIED moves on; the target is out until Restore", primary: func(int) error { return status.Error(codes.PermissionDenied, "no") },
			route: "primary secondary", state: out},
		{name: "a spent quota (ErrorInfo insufficient_quota) moves on; out until Restore",
			primary: func(int) error { return withReason(codes.ResourceExhausted, "INSUFFICIENT_QUOTA") },
			route:   "primary secondary", state: out},
		{name: "a request too long (ErrorInfo context_length_exceeded) finds no longer context: stops",
			primary: func(int) error { return withReason(codes.InvalidArgument, "context_length_exceeded") },
			route:   "primary", reason: recoil.ReasonPermanent, code: codes.InvalidArgument, state: in},
		{name: "UNAVAILABLE under DefaultFallbackRule is retried on the same target", primary: func(int) error { return status.Error(codes.Unavailable, "down") },
			route: "primary primary primary", reason: recoil.ReasonAttempts, code: codes.Unavailable, state: in},
		{name: "UNAVAILABLE once under DefaultFallbackRule: the retry there answers",
			primary: func(n int) error {
				if n == 1 {
					return status.Error(codes.Unavailable, "blip")
				}
				return nil
			},
			route: "primary primary", state: in},
		{name: "UNAVAILABLE under FallbackRule moves on and cools the target", rule: recoilgrpc.FallbackRule,
			primary: func(int) error { return status.Error(codes.Unavailable, "down") },
			route:   "primary secondary", state: cooling},
		{name: "RESOURCE_EXHAUSTED without pushback under DefaultFallbackRule stops",
			primary: func(int) error { return status.Error(codes.ResourceExhausted, "quota") },
			route:   "primary", reason: recoil.ReasonPermanent, code: codes.ResourceExhausted, state: in},
		{name: "RESOURCE_EXHAUSTED without pushback under FallbackRule moves on and cools the target", rule: recoilgrpc.FallbackRule,
			primary: func(int) error { return status.Error(codes.ResourceExhausted, "quota") },
			route:   "primary secondary", state: cooling},
		{name: "a validator's INVALID_ARGUMENT stops on every target alike", rule: recoilgrpc.FallbackRule,
			primary: func(int) error { return status.Error(codes.InvalidArgument, "bad field") },
			route:   "primary", reason: recoil.ReasonPermanent, code: codes.InvalidArgument, state: in},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var a, b seen
			addrA := serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				if err := tt.primary(a.add(ctx)); err != nil {
					return nil, err
				}
				return wrapperspb.String("primary: " + in.GetValue()), nil
			}})
			addrB := serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				b.add(ctx)
				return wrapperspb.String("secondary: " + in.GetValue()), nil
			}})
			ccB := dial(t, addrB)
			var route []string
			p := fallbackPolicy(tt.rule, &route,
				recoilgrpc.NewTarget("primary", nil, nil),
				recoilgrpc.NewTarget("secondary", ccB, metadata.Pairs("X-Api-Key", "key-b"), grpc.PerRPCCredentials(testCreds("secondary's"))))
			rc := &recoilgrpc.Client{Policy: p}
			ccA := dial(t, addrA, grpc.WithUnaryInterceptor(rc.Unary))

			// The caller's own credentials, in metadata and as a call option.
			ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer caller's")
			reply := new(wrapperspb.StringValue)
			err := ccA.Invoke(ctx, callMethod, wrapperspb.String("x"), reply, grpc.PerRPCCredentials(testCreds("caller's")))

			want := strings.Fields(tt.route)
			if got := strings.Join(route, " "); got != tt.route {
				t.Errorf("attempts went to %q, want %q", got, tt.route)
			}
			nA := strings.Count(tt.route, "primary")
			if a.count() != nA || b.count() != len(want)-nA {
				t.Errorf("the servers saw %d and %d attempts, want %d and %d", a.count(), b.count(), nA, len(want)-nA)
			}
			switch {
			case tt.reason == recoil.ReasonNone && err != nil:
				t.Errorf("call: %v, want success", err)
			case tt.reason == recoil.ReasonNone && reply.GetValue() != want[len(want)-1]+": x":
				t.Errorf("reply %q, want the %s's", reply.GetValue(), want[len(want)-1])
			case tt.reason != recoil.ReasonNone && (!errorIs(err, tt.reason) || status.Code(err) != tt.code):
				t.Errorf("call: %v (%v), want %v with %v", err, status.Code(err), tt.reason.Sentinel(), tt.code)
			}
			// The caller's credentials reach its own connection alone; the
			// secondary gets its own.
			for i, v := range a.values("authorization") {
				if v != "Bearer caller's" || a.values("x-creds")[i] != "caller's" {
					t.Errorf("the primary's attempt %d had authorization %q, x-creds %q; want the caller's", i+1, v, a.values("x-creds")[i])
				}
			}
			if b.count() > 0 {
				if got := b.values("authorization")[0] + "|" + b.values("x-creds")[0] + "|" + b.values("x-api-key")[0]; got != "|secondary's|key-b" {
					t.Errorf("the secondary saw authorization|x-creds|x-api-key %q, want only its own: %q", got, "|secondary's|key-b")
				}
			}
			st := p.Fallback.Status(time.Time{})[0]
			state := in
			switch {
			case st.Out:
				state = out
			case st.Cooling > 0:
				state = cooling
			}
			if state != tt.state {
				t.Errorf("the primary is %s (%+v), want %s", state, st, tt.state)
			}
		})
	}
}

// errorIs reports whether err is r's sentinel.
func errorIs(err error, r recoil.Reason) bool {
	var re *recoil.Error
	return errors.As(err, &re) && re.Reason == r
}

// A target's channel may carry a Client's interceptors of its own: they
// pass the routed attempt straight through, so attempts do not multiply —
// the secondary sees the outer policy's two attempts, not two times its
// own policy's five — and its Client reports no call of its own. A
// *grpc.ClientConn set as the Value directly is a Channel with nothing
// added; a target on another connection to the caller's own server keeps
// the caller's credentials.
func TestFallbackNoStackedRetries(t *testing.T) {
	var a, b seen
	addrA := serve(t, &testServer{call: func(ctx context.Context, _ *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		a.add(ctx)
		return nil, status.Error(codes.NotFound, "retired")
	}})
	addrB := serve(t, &testServer{call: func(ctx context.Context, _ *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		b.add(ctx)
		return nil, status.Error(codes.Unavailable, "down")
	}})
	var inner int
	var mu sync.Mutex
	innerClient := &recoilgrpc.Client{Policy: &recoil.Policy{MaxAttempts: 5, Backoff: backoff.Constant(time.Millisecond), Budget: recoil.NoBudget,
		Observe: func(context.Context, recoil.Summary) { mu.Lock(); inner++; mu.Unlock() }}}
	ccB := dial(t, addrB, grpc.WithUnaryInterceptor(innerClient.Unary))
	ccA2 := dial(t, addrA) // the caller's own server, another connection

	var route []string
	p := fallbackPolicy(nil, &route,
		recoil.Target{Name: "own"},
		recoil.Target{Name: "own server", Value: ccA2},
		recoil.Target{Name: "secondary", Value: ccB})
	p.MaxAttempts = 4
	rc := &recoilgrpc.Client{Policy: p}
	ccA := dial(t, addrA, grpc.WithUnaryInterceptor(rc.Unary))
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer caller's")
	_, err := call(ctx, ccA, "x")

	if !errorIs(err, recoil.ReasonAttempts) || status.Code(err) != codes.Unavailable {
		t.Errorf("call: %v, want attempts exhausted on the secondary's UNAVAILABLE", err)
	}
	if got := strings.Join(route, " "); got != "own own server secondary secondary" {
		t.Errorf("attempts went to %q", got)
	}
	if a.count() != 2 || b.count() != 2 || inner != 0 {
		t.Errorf("the servers saw %d and %d attempts, the inner Client %d calls; want 2, 2 (not 2×5) and 0", a.count(), b.count(), inner)
	}
	if got := a.values("authorization"); !slices.Equal(got, []string{"Bearer caller's", "Bearer caller's"}) {
		t.Errorf("the caller's server saw authorization %q on its two connections, want the caller's on both", got)
	}
	if got := b.values("authorization"); !slices.Equal(got, []string{"", ""}) {
		t.Errorf("the secondary saw authorization %q, want none", got)
	}
	if got := b.values(recoilgrpc.PreviousAttemptsKey); !slices.Equal(got, []string{"2", "3"}) {
		t.Errorf("the secondary saw %s %q, want the outer call's count: 2, 3", recoilgrpc.PreviousAttemptsKey, got)
	}
}

// A stream falls back too: its first attempt fails with NOT_FOUND before
// any message, and the next opens on the other channel with the messages
// sent so far replayed there.
func TestFallbackStream(t *testing.T) {
	var a, b seen
	addrA := serve(t, &testServer{chat: func(ss grpc.ServerStream) error {
		a.add(ss.Context())
		return status.Error(codes.NotFound, "retired")
	}})
	addrB := serve(t, &testServer{chat: func(ss grpc.ServerStream) error {
		b.add(ss.Context())
		for {
			in := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(in); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if err := ss.SendMsg(wrapperspb.String("secondary: " + in.GetValue())); err != nil {
				return err
			}
		}
	}})
	ccB := dial(t, addrB)
	var route []string
	p := fallbackPolicy(nil, &route, recoilgrpc.NewTarget("primary", nil, nil), recoil.Target{Name: "secondary", Value: ccB})
	rc := &recoilgrpc.Client{Policy: p}
	ccA := dial(t, addrA, grpc.WithStreamInterceptor(rc.Stream))

	cs, err := chat(t.Context(), ccA)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "b"} {
		if err := cs.SendMsg(wrapperspb.String(m)); err != nil {
			t.Fatal(err)
		}
	}
	cs.CloseSend()
	var got []string
	for {
		out := new(wrapperspb.StringValue)
		if err := cs.RecvMsg(out); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("RecvMsg: %v after %q", err, got)
		}
		got = append(got, out.GetValue())
	}
	if !slices.Equal(got, []string{"secondary: a", "secondary: b"}) || a.count() != 1 || b.count() != 1 {
		t.Errorf("received %q with %d and %d attempts; want both messages from the secondary, one attempt each", got, a.count(), b.count())
	}
	if r := strings.Join(route, " "); r != "primary secondary" {
		t.Errorf("attempts went to %q", r)
	}
}

// The verdicts' codes and what FallbackRule makes of them, beside
// DefaultFallbackRule.
func TestFallbackRule(t *testing.T) {
	const cool = 15 * time.Second
	tests := []struct {
		err          error
		code         string
		def, grpcway recoil.Leave
	}{
		{status.Error(codes.NotFound, ""), recoilgrpc.CodeNotFound,
			recoil.Leave{Move: true, Cool: recoil.RetiredCooldown, Why: "model not found"}, recoil.Leave{Move: true, Cool: recoil.RetiredCooldown, Why: "model not found"}},
		{withReason(codes.NotFound, "SERVICE_DISABLED"), recoilgrpc.CodeNotFound, // the status says more
			recoil.Leave{Move: true, Cool: recoil.RetiredCooldown, Why: "model not found"}, recoil.Leave{Move: true, Cool: recoil.RetiredCooldown, Why: "model not found"}},
		{status.Error(codes.Unauthenticated, ""), recoilgrpc.CodeUnauthenticated,
			recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "key refused"}, recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "key refused"}},
		{status.Error(codes.PermissionDenied, ""), recoilgrpc.CodePermissionDenied,
			recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "key refused"}, recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "key refused"}},
		{status.Error(codes.ResourceExhausted, "grpc: received message larger than max (9 vs. 4)"), recoilgrpc.CodeTooLarge,
			recoil.Leave{Move: true, Longer: true, Why: "context too long"}, recoil.Leave{Move: true, Longer: true, Why: "context too long"}},
		{status.Error(codes.ResourceExhausted, "quota"), recoilgrpc.CodeResourceExhausted,
			recoil.Leave{}, recoil.Leave{Move: true, Cool: cool, Why: "resource exhausted"}},
		{withReason(codes.ResourceExhausted, "insufficient_quota"), "insufficient_quota",
			recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "quota exhausted"}, recoil.Leave{Move: true, Cool: recoil.CoolForever, Why: "quota exhausted"}},
		{status.Error(codes.Unavailable, ""), recoilgrpc.CodeUnavailable,
			recoil.Leave{}, recoil.Leave{Move: true, Cool: cool, Why: "unavailable"}},
		{withReason(codes.InvalidArgument, "context_length_exceeded"), "context_length_exceeded",
			recoil.Leave{Move: true, Longer: true, Why: "context too long"}, recoil.Leave{Move: true, Longer: true, Why: "context too long"}},
		{status.Error(codes.InvalidArgument, ""), "", recoil.Leave{}, recoil.Leave{}},
		{status.Error(codes.Internal, ""), "", recoil.Leave{}, recoil.Leave{}},
	}
	for _, tt := range tests {
		v := recoilgrpc.Classify(tt.err, nil)
		if v.Code != tt.code {
			t.Errorf("Classify(%v).Code = %q, want %q", tt.err, v.Code, tt.code)
		}
		if got := recoil.DefaultFallbackRule(v, cool); got != tt.def {
			t.Errorf("DefaultFallbackRule(%v) = %+v, want %+v", tt.err, got, tt.def)
		}
		if got := recoilgrpc.FallbackRule(v, cool); got != tt.grpcway {
			t.Errorf("FallbackRule(%v) = %+v, want %+v", tt.err, got, tt.grpcway)
		}
	}
	// A message over the size limit is permanent even where
	// RESOURCE_EXHAUSTED is retryable.
	if v := recoilgrpc.Classify(status.Error(codes.ResourceExhausted, "trying to send message larger than max (9 vs. 4)"), []codes.Code{codes.ResourceExhausted}); v.Class != recoil.ClassPermanent {
		t.Errorf("a message too large, with RESOURCE_EXHAUSTED retryable: %v, want permanent", v)
	}
}
