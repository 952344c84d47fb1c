package recoilgrpc_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/limit"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// slotLog is a one-slot LatencyLimiter and PriorityLimiter that writes
// down what the server tells it.
type slotLog struct {
	mu       sync.Mutex
	held     bool
	retries  int // slots asked for a retry
	overload []bool
}

func (l *slotLog) TryAcquire() bool { return l.TryAcquireAs(recoil.PriorityInteractive, false) }
func (l *slotLog) TryAcquireAs(_ recoil.Priority, retry bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if retry {
		l.retries++
	}
	if l.held {
		return false
	}
	l.held = true
	return true
}
func (l *slotLog) Acquire(context.Context) error { return errors.New("the server never waits") }
func (l *slotLog) AcquireAs(context.Context, recoil.Priority, bool) error {
	return errors.New("the server never waits")
}
func (l *slotLog) Release() { l.ReleaseAt(time.Time{}, -1, false) }
func (l *slotLog) ReleaseAt(_ time.Time, latency time.Duration, overload bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
	if latency >= 0 {
		l.overload = append(l.overload, overload)
	}
}

// TestServerLimiter: each call holds a slot of the Server's Limiter while
// its handler runs; a call without one is refused with the pushback, a
// retry is ranked as one, and the limiter hears whether each call ended
// in overload.
func TestServerLimiter(t *testing.T) {
	lim := &slotLog{}
	hs := &recoilgrpc.Server{Limiter: lim, Pushback: 250 * time.Millisecond}
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	addr := serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		switch in.GetValue() {
		case "hold":
			held <- struct{}{}
			<-release
		case "overloaded":
			return nil, status.Error(codes.ResourceExhausted, "full")
		}
		return in, nil
	}}, grpc.ChainUnaryInterceptor(hs.Unary))
	cc := dial(t, addr)
	send := func(v string, md ...string) (metadata.MD, error) {
		var tr metadata.MD
		ctx := metadata.AppendToOutgoingContext(t.Context(), md...)
		err := cc.Invoke(ctx, callMethod, wrapperspb.String(v), new(wrapperspb.StringValue), grpc.Trailer(&tr))
		return tr, err
	}
	done := make(chan error, 1)
	go func() { _, err := send("hold"); done <- err }()
	<-held
	tr, err := send("x")
	if status.Code(err) != codes.Unavailable || len(tr.Get(recoilgrpc.PushbackKey)) != 1 || tr.Get(recoilgrpc.PushbackKey)[0] != "250" {
		t.Errorf("a call with the slot held: %v, pushback %q; want UNAVAILABLE and 250", err, tr.Get(recoilgrpc.PushbackKey))
	}
	if _, err := send("x", "recoil-attempt", "2"); status.Code(err) != codes.Unavailable {
		t.Errorf("a retry with the slot held: %v, want UNAVAILABLE", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := send("overloaded"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("overloaded: %v", err)
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if lim.retries != 1 || len(lim.overload) != 2 || lim.overload[0] || !lim.overload[1] || lim.held {
		t.Errorf("retries asked %d, overload reports %v, held %v; want 1, [false true], false", lim.retries, lim.overload, lim.held)
	}
}

// An adaptive limiter serves as the Server's Limiter as it is.
func TestServerAdaptiveLimiter(t *testing.T) {
	a := limit.Must(limit.NewAdaptive(limit.AdaptiveConfig{Initial: 1, Min: 1, Max: 1}))
	hs := &recoilgrpc.Server{Limiter: a}
	addr := serve(t, &testServer{call: func(_ context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) { return in, nil }},
		grpc.ChainUnaryInterceptor(hs.Unary))
	cc := dial(t, addr)
	for range 3 {
		if err := cc.Invoke(t.Context(), callMethod, wrapperspb.String("x"), new(wrapperspb.StringValue)); err != nil {
			t.Fatal(err)
		}
	}
	if a.InUse() != 0 {
		t.Errorf("%d slots still held after the calls", a.InUse())
	}
}
