package recoilgrpc_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// Over its concurrency limit the Server sheds retries first, telling them
// not to come back (pushback -1, recoil-retry: no); first attempts pass
// until the limit itself, and are then told when to come back. It reads
// the caller's budget (lowering its own, never raising it) and deadline
// into the handler's context.
func TestServerSheds(t *testing.T) {
	hs := &recoilgrpc.Server{MaxConcurrent: 2, Pushback: 250 * time.Millisecond} // a retry is refused with 1 call in flight
	release := make(chan struct{})
	held := make(chan struct{}, 4)
	type seen struct {
		budget   int
		deadline bool
	}
	got := make(chan seen, 8)
	addr := serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		a := hop.AccountFrom(ctx)
		_, dl := ctx.Deadline()
		got <- seen{a.Remaining(), dl}
		if in.GetValue() == "hold" {
			held <- struct{}{}
			<-release
		}
		return in, nil
	}}, grpc.ChainUnaryInterceptor(hs.Unary))
	cc := dial(t, addr)
	send := func(attempt string, md ...string) (metadata.MD, error) {
		var tr metadata.MD
		ctx := metadata.AppendToOutgoingContext(t.Context(), md...)
		err := cc.Invoke(ctx, callMethod, wrapperspb.String(attempt), new(wrapperspb.StringValue), grpc.Trailer(&tr))
		return tr, err
	}

	// Budget and deadline reach the handler.
	if _, err := send("x", "recoil-retry-budget", "1", "recoil-deadline-ms", "5000"); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.budget != 1 || !s.deadline {
		t.Errorf("handler saw budget %d, deadline %v; want 1 and a deadline", s.budget, s.deadline)
	}
	if _, err := send("x", "recoil-retry-budget", "900"); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.budget != 2 {
		t.Errorf("handler saw budget %d from a caller asking for 900, want the server's own 2", s.budget)
	}
	if _, err := send("x", "recoil-deadline-ms", "1"); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("a call with 1 ms left: %v, want DEADLINE_EXCEEDED before any work", err)
	}

	// One call in flight: retries are shed, first attempts pass.
	done := make(chan error, 1)
	go func() { _, err := send("hold"); done <- err }()
	<-held
	<-got
	tests := []struct {
		name     string
		md       []string
		code     codes.Code
		pushback string
		noRetry  bool
	}{
		{"a retry by recoil-attempt", []string{"recoil-attempt", "2"}, codes.Unavailable, "-1", true},
		{"a retry by grpc-previous-rpc-attempts", []string{recoilgrpc.PreviousAttemptsKey, "1"}, codes.Unavailable, "-1", true},
		{"a first attempt", []string{"recoil-attempt", "1"}, codes.OK, "", false},
	}
	for _, tt := range tests {
		tr, err := send("x", tt.md...)
		if status.Code(err) != tt.code {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.code)
		}
		if pb := tr.Get(recoilgrpc.PushbackKey); tt.pushback != "" && (len(pb) != 1 || pb[0] != tt.pushback) {
			t.Errorf("%s: pushback %q, want %q", tt.name, pb, tt.pushback)
		}
		if r, _ := hop.ParseResponse(hop.Metadata(tr)); r.NoRetry != tt.noRetry {
			t.Errorf("%s: recoil-retry: no is %v, want %v", tt.name, r.NoRetry, tt.noRetry)
		}
		if tt.code == codes.OK {
			<-got
		}
	}
	// Two in flight: the limit; a first attempt is told when to come back.
	go func() { _, err := send("hold"); done <- err }()
	<-held
	<-got
	tr, err := send("x")
	if status.Code(err) != codes.Unavailable || len(tr.Get(recoilgrpc.PushbackKey)) != 1 || tr.Get(recoilgrpc.PushbackKey)[0] != "250" {
		t.Errorf("a first attempt at the limit: %v, pushback %q; want UNAVAILABLE and 250", err, tr.Get(recoilgrpc.PushbackKey))
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if n := hs.Histogram().Retries(); n != 2 {
		t.Errorf("histogram counts %d retries, want 2", n)
	}

	// SetShedding refuses every retry whatever the load.
	hs.SetShedding(true)
	if _, err := send("x", "recoil-attempt", "3"); status.Code(err) != codes.Unavailable {
		t.Errorf("a retry while shedding: %v, want UNAVAILABLE", err)
	}
}

// A Server that does not trust its callers (the default) replaces the hop
// protocol's incoming metadata with its own figures before the handler
// runs, so a handler that forwards its incoming metadata (a proxy) carries
// this hop's budget on, never the client's; one that trusts them leaves it
// as sent. A call with no time left never reaches the handler.
func TestServerReplacesIncomingMetadata(t *testing.T) {
	tests := []struct {
		name       string
		trust      bool
		md         []string
		budget     string // recoil-retry-budget the handler sees
		attempt    string // recoil-attempt the handler sees
		deadlineMs bool   // whether it sees recoil-deadline-ms
	}{
		{"untrusted: the client's 9 becomes the server's 2", false, []string{"recoil-retry-budget", "9", "recoil-attempt", "1"}, "2", "", false},
		{"untrusted: a plain call gets the server's budget", false, nil, "2", "", false},
		{"untrusted: a lower budget is kept, the deadline less the margin", false, []string{"recoil-retry-budget", "1", "recoil-deadline-ms", "5000"}, "1", "", true},
		{"trusted: as sent", true, []string{"recoil-retry-budget", "9", "recoil-attempt", "1"}, "9", "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := &recoilgrpc.Server{TrustIncoming: tt.trust}
			seen := make(chan metadata.MD, 1)
			addr := serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				md, _ := metadata.FromIncomingContext(ctx)
				seen <- md
				return in, nil
			}}, grpc.ChainUnaryInterceptor(hs.Unary))
			cc := dial(t, addr)
			ctx := metadata.AppendToOutgoingContext(t.Context(), tt.md...)
			if err := cc.Invoke(ctx, callMethod, wrapperspb.String("x"), new(wrapperspb.StringValue)); err != nil {
				t.Fatal(err)
			}
			md := <-seen
			if got := first(md, "recoil-retry-budget"); got != tt.budget {
				t.Errorf("handler saw recoil-retry-budget %q, want %q", got, tt.budget)
			}
			if got := first(md, "recoil-attempt"); got != tt.attempt {
				t.Errorf("handler saw recoil-attempt %q, want %q", got, tt.attempt)
			}
			if got := first(md, "recoil-deadline-ms"); (got != "") != tt.deadlineMs || got == "5000" {
				t.Errorf("handler saw recoil-deadline-ms %q, want one only if sent, less the margin", got)
			}
			// No time left: refused before the handler.
			ctx = metadata.AppendToOutgoingContext(t.Context(), "recoil-deadline-ms", "3")
			if err := cc.Invoke(ctx, callMethod, wrapperspb.String("x"), new(wrapperspb.StringValue)); status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("a call with 3 ms left: %v, want DEADLINE_EXCEEDED", err)
			}
			select {
			case <-seen:
				t.Error("the handler ran for a call with no time left")
			default:
			}
		})
	}
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}
