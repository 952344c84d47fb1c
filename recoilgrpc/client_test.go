package recoilgrpc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// observed returns a policy of 3 attempts with short backoff and no
// budget, and the summaries it reports.
func observed() (*recoil.Policy, func() []recoil.Summary) {
	var mu sync.Mutex
	var sums []recoil.Summary
	p := &recoil.Policy{MaxAttempts: 3, Backoff: backoff.Constant(time.Millisecond),
		OverloadBackoff: backoff.Constant(time.Millisecond), Budget: recoil.NoBudget,
		Observe: func(_ context.Context, s recoil.Summary) { mu.Lock(); sums = append(sums, s); mu.Unlock() }}
	return p, func() []recoil.Summary { mu.Lock(); defer mu.Unlock(); return append([]recoil.Summary(nil), sums...) }
}

// A server's pushback (grpc-retry-pushback-ms) and google.rpc.RetryInfo
// are waits the loop honours and never shortens; a negative, malformed or
// repeated pushback stops retrying (gRFC A6); RESOURCE_EXHAUSTED is
// retried only with a wait; and no wait is started past the deadline.
func TestPushback(t *testing.T) {
	retryInfo := func(d time.Duration) *status.Status {
		st, err := status.New(codes.Unavailable, "later").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	tests := []struct {
		name     string
		st       *status.Status
		pushback []string
		timeout  time.Duration
		attempts int
		reason   recoil.Reason
		code     string        // the last verdict's Code
		waited   time.Duration // at least
		refused  time.Duration
	}{
		{name: "positive: waits at least that long", st: status.New(codes.Unavailable, "busy"), pushback: []string{"120"},
			attempts: 2, code: recoilgrpc.CodeUnavailable, waited: 120 * time.Millisecond},
		{name: "zero: retries at once", st: status.New(codes.Unavailable, "busy"), pushback: []string{"0"},
			attempts: 2, code: recoilgrpc.CodeUnavailable},
		{name: "negative: stops", st: status.New(codes.Unavailable, "busy"), pushback: []string{"-1"},
			attempts: 1, reason: recoil.ReasonPermanent, code: recoilgrpc.CodeDoNotRetry},
		{name: "malformed: stops", st: status.New(codes.Unavailable, "busy"), pushback: []string{"soon"},
			attempts: 1, reason: recoil.ReasonPermanent, code: recoilgrpc.CodeDoNotRetry},
		{name: "two values: stops", st: status.New(codes.Unavailable, "busy"), pushback: []string{"10", "20"},
			attempts: 1, reason: recoil.ReasonPermanent, code: recoilgrpc.CodeDoNotRetry},
		{name: "RetryInfo: waits at least its delay", st: retryInfo(120 * time.Millisecond),
			attempts: 2, code: recoilgrpc.CodeUnavailable, waited: 120 * time.Millisecond},
		{name: "RESOURCE_EXHAUSTED without a wait is a quota: permanent", st: status.New(codes.ResourceExhausted, "quota"),
			attempts: 1, reason: recoil.ReasonPermanent, code: recoilgrpc.CodeResourceExhausted},
		{name: "RESOURCE_EXHAUSTED with pushback is throttled: retried after it", st: status.New(codes.ResourceExhausted, "slow down"), pushback: []string{"80"},
			attempts: 2, waited: 80 * time.Millisecond},
		// A timeout long enough for a busy machine's first call (a 300 ms
		// one can run out during the attempt), the pushback far past it
		// and within recoil.DefaultMaxServerWait.
		{name: "a pushback past the deadline is refused at once", st: status.New(codes.Unavailable, "busy"), pushback: []string{"50000"},
			timeout: 10 * time.Second, attempts: 1, reason: recoil.ReasonDeadline, code: recoilgrpc.CodeUnavailable, refused: 50 * time.Second},
		{name: "INTERNAL is not in the default set", st: status.New(codes.Internal, "bug"),
			attempts: 1, reason: recoil.ReasonPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seen atomic.Int32
			var prev [3]string
			addr := serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				n := seen.Add(1)
				if v := metadata.ValueFromIncomingContext(ctx, recoilgrpc.PreviousAttemptsKey); len(v) > 0 && n <= 3 {
					prev[n-1] = v[0]
				}
				if n > 1 {
					return in, nil // the retry succeeds
				}
				if tt.pushback != nil {
					md := metadata.MD{}
					md[recoilgrpc.PushbackKey] = tt.pushback
					grpc.SetTrailer(ctx, md)
				}
				return nil, tt.st.Err()
			}})
			p, sums := observed()
			p.Timeout = tt.timeout
			rc := &recoilgrpc.Client{Policy: p}
			cc := dial(t, addr, grpc.WithUnaryInterceptor(rc.Unary))
			start := time.Now()
			_, err := call(t.Context(), cc, "x")
			elapsed := time.Since(start)

			if got := int(seen.Load()); got != tt.attempts {
				t.Errorf("the server saw %d attempts, want %d", got, tt.attempts)
			}
			s := sums()
			if len(s) != 1 {
				t.Fatalf("Observe called %d times, want once", len(s))
			}
			if s[0].Reason != tt.reason {
				t.Errorf("reason = %v, want %v (err %v)", s[0].Reason, tt.reason, err)
			}
			if tt.reason != recoil.ReasonNone && status.Code(err) != tt.st.Code() {
				t.Errorf("status.Code(err) = %v, want the server's %v", status.Code(err), tt.st.Code())
			}
			if s[0].Verdict.Code != tt.code {
				t.Errorf("verdict code = %q, want %q (%v)", s[0].Verdict.Code, tt.code, s[0].Verdict)
			}
			if s[0].Waited < tt.waited || elapsed < tt.waited {
				t.Errorf("waited %v (elapsed %v), want at least %v", s[0].Waited, elapsed, tt.waited)
			}
			if s[0].RefusedWait != tt.refused {
				t.Errorf("refused wait %v, want %v", s[0].RefusedWait, tt.refused)
			}
			// A call that waited for the wait it refused is cut off at its
			// timeout; one that refused it returns at once, which on a busy
			// machine is still well within half the timeout.
			if tt.refused > 0 && elapsed >= tt.timeout/2 {
				t.Errorf("the call took %v of its %v timeout: it waited for a wait it refused", elapsed, tt.timeout)
			}
			if tt.attempts == 2 && (prev[0] != "" || prev[1] != "1") {
				t.Errorf("grpc-previous-rpc-attempts = %q, %q; want none, then 1", prev[0], prev[1])
			}
		})
	}
}

// A channel whose service config gives grpc-go a retryPolicy of its own is
// reported once, as two retry layers; without one, nothing is said.
func TestStackedLayers(t *testing.T) {
	const sc = `{"methodConfig":[{"name":[{"service":"recoil.test.Test"}],"retryPolicy":{"maxAttempts":3,"initialBackoff":"0.01s","maxBackoff":"0.1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`
	addr := serve(t, &testServer{call: func(_ context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) { return in, nil }})
	for _, tt := range []struct {
		name  string
		opts  []grpc.DialOption
		warns int
	}{
		{"grpc-go's retryPolicy too", []grpc.DialOption{grpc.WithDefaultServiceConfig(sc)}, 1},
		{"recoil alone", nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			rc := &recoilgrpc.Client{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
			cc := dial(t, addr, append(tt.opts, grpc.WithUnaryInterceptor(rc.Unary))...)
			for range 3 {
				if _, err := call(t.Context(), cc, "x"); err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Count(buf.String(), "two retry layers"); got != tt.warns {
				t.Errorf("%d warnings, want %d: %s", got, tt.warns, buf.String())
			}
		})
	}
}

// A call stopped before any attempt (an open breaker) says UNAVAILABLE and
// why; a call its caller abandoned says CANCELED and returns the cause.
func TestCallErrors(t *testing.T) {
	addr := serve(t, &testServer{call: func(ctx context.Context, _ *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	left := errors.New("the caller left")
	ctx, cancel := context.WithCancelCause(t.Context())
	time.AfterFunc(50*time.Millisecond, func() { cancel(left) })
	p, _ := observed()
	rc := &recoilgrpc.Client{Policy: p}
	cc := dial(t, addr, grpc.WithUnaryInterceptor(rc.Unary))
	_, err := call(ctx, cc, "x")
	if !errors.Is(err, left) || status.Code(err) != codes.Canceled {
		t.Errorf("abandoned call: %v (code %v), want the cause with CANCELED", err, status.Code(err))
	}

	p.Budget = refuseAll{}
	_, err = call(t.Context(), cc, "x")
	if !errors.Is(err, recoil.ErrBudget) || status.Code(err) != codes.Unavailable {
		t.Errorf("refused call: %v (code %v), want ErrBudget with UNAVAILABLE", err, status.Code(err))
	}
}

type refuseAll struct{}

func (refuseAll) AdmitAt(time.Time) bool               { return false }
func (refuseAll) RetryAt(time.Time, budget.Cause) bool { return false }
func (refuseAll) RecordAt(time.Time, budget.Outcome)   {}
