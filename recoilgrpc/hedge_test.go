package recoilgrpc_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// attemptOf is the attempt number a request carries: 1 plus
// grpc-previous-rpc-attempts, which every retry and hedge sends.
func attemptOf(ctx context.Context) int {
	v := metadata.ValueFromIncomingContext(ctx, recoilgrpc.PreviousAttemptsKey)
	if len(v) == 0 {
		return 1
	}
	n, _ := strconv.Atoi(v[0])
	return n + 1
}

// step is how a scripted attempt ends: after a time, with an error (nil:
// the reply), or never (hang) until it is cancelled.
type step struct {
	after time.Duration
	err   error
	hang  bool
}

// cancels records the attempts whose server context was cancelled.
type cancels struct {
	mu sync.Mutex
	n  []int
}

func (c *cancels) add(n int) { c.mu.Lock(); c.n = append(c.n, n); c.mu.Unlock() }

func (c *cancels) list() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(slices.Values(c.n))
}

// play answers attempt n of a script, recording a cancellation.
func play(ctx context.Context, script map[int]step, gone *cancels) (*wrapperspb.StringValue, error) {
	n := attemptOf(ctx)
	s := script[n]
	grpc.SetHeader(ctx, metadata.Pairs("attempt", strconv.Itoa(n)))
	grpc.SetTrailer(ctx, metadata.Pairs("attempt-trailer", strconv.Itoa(n)))
	var done <-chan time.Time
	if !s.hang {
		t := time.NewTimer(s.after)
		defer t.Stop()
		done = t.C
	}
	select {
	case <-done:
	case <-ctx.Done():
		gone.add(n)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	return wrapperspb.String("attempt " + strconv.Itoa(n)), nil
}

// hedgeConfig is the policy of a service config's hedgingPolicy.
func hedgeConfig(policy string) func() *recoil.Policy {
	return func() *recoil.Policy {
		p, err := recoilgrpc.PolicyFromServiceConfig([]byte(`{"methodConfig":[{"name":[{"service":"recoil.test.Test"}],"hedgingPolicy":`+policy+`}]}`), callMethod)
		if err != nil {
			panic(err)
		}
		p.Budget = recoil.NoBudget
		return p
	}
}

// Hedged unary calls over gRPC, on the virtual time of a synctest bubble:
// a slow attempt is raced after the hedge delay, the first success wins
// and the losers' server contexts are cancelled; a fatal failure ends the
// call and cancels the hedge; a non-fatal one waits for it; and a service
// config's hedgingPolicy hedges as gRFC A6 says. The caller gets the
// winner's reply, header and trailer.
func TestHedge(t *testing.T) {
	hedged := func() *recoil.Policy {
		return &recoil.Policy{Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}, Backoff: backoff.Constant(20 * time.Millisecond), Budget: recoil.NoBudget}
	}
	tests := []struct {
		name      string
		policy    func() *recoil.Policy
		script    map[int]step
		attempts  int
		hedges    int
		winner    int        // the attempt whose reply the caller gets; 0 for a failure
		code      codes.Code // the failure's
		took      time.Duration
		cancelled []int // the attempts the server saw cancelled
	}{
		{name: "the hedge wins; the slow attempt is cancelled", policy: hedged,
			script:   map[int]step{1: {hang: true}, 2: {}},
			attempts: 2, hedges: 1, winner: 2, took: 100 * time.Millisecond, cancelled: []int{1}},
		{name: "an attempt that answers before the delay is not raced", policy: hedged,
			script:   map[int]step{1: {after: 50 * time.Millisecond}},
			attempts: 1, winner: 1, took: 50 * time.Millisecond},
		{name: "the first attempt wins over a slower hedge", policy: hedged,
			script:   map[int]step{1: {after: 150 * time.Millisecond}, 2: {hang: true}},
			attempts: 2, hedges: 1, winner: 1, took: 150 * time.Millisecond, cancelled: []int{2}},
		{name: "a fatal failure ends the call and cancels the hedge", policy: hedged,
			script:   map[int]step{1: {after: 150 * time.Millisecond, err: status.Error(codes.InvalidArgument, "bad")}, 2: {hang: true}},
			attempts: 2, hedges: 1, code: codes.InvalidArgument, took: 150 * time.Millisecond, cancelled: []int{2}},
		{name: "a retryable failure waits for the hedge in flight", policy: hedged,
			script:   map[int]step{1: {after: 150 * time.Millisecond, err: status.Error(codes.Unavailable, "busy")}, 2: {after: 200 * time.Millisecond}},
			attempts: 2, hedges: 1, winner: 2, took: 300 * time.Millisecond},
		// gRFC A6: "the next hedged request in line is sent immediately,
		// shortcutting its hedging delay".
		{name: "hedgingPolicy: a non-fatal failure sends the next hedge at once",
			policy:   hedgeConfig(`{"maxAttempts":3,"hedgingDelay":"0.1s","nonFatalStatusCodes":["UNAVAILABLE"]}`),
			script:   map[int]step{1: {hang: true}, 2: {err: status.Error(codes.Unavailable, "busy")}, 3: {}},
			attempts: 3, hedges: 2, winner: 3, took: 100 * time.Millisecond, cancelled: []int{1}},
		{name: "hedgingPolicy: a hedge every hedgingDelay",
			policy:   hedgeConfig(`{"maxAttempts":3,"hedgingDelay":"0.1s","nonFatalStatusCodes":["UNAVAILABLE"]}`),
			script:   map[int]step{1: {hang: true}, 2: {hang: true}, 3: {}},
			attempts: 3, hedges: 2, winner: 3, took: 200 * time.Millisecond, cancelled: []int{1, 2}},
		{name: "hedgingPolicy: a fatal code ends the call",
			policy:   hedgeConfig(`{"maxAttempts":3,"hedgingDelay":"0.1s","nonFatalStatusCodes":["UNAVAILABLE"]}`),
			script:   map[int]step{1: {hang: true}, 2: {err: status.Error(codes.Internal, "bug")}},
			attempts: 2, hedges: 1, code: codes.Internal, took: 100 * time.Millisecond, cancelled: []int{1}},
		{name: "hedgingPolicy: a non-fatal failure with nothing in flight sends the next at once",
			policy:   hedgeConfig(`{"maxAttempts":2,"hedgingDelay":"1s","nonFatalStatusCodes":["UNAVAILABLE"]}`),
			script:   map[int]step{1: {after: 10 * time.Millisecond, err: status.Error(codes.Unavailable, "busy")}, 2: {}},
			attempts: 2, winner: 2, took: 10 * time.Millisecond},
		{name: "hedgingPolicy: hedgingDelay 0s sends every attempt at once",
			policy:   hedgeConfig(`{"maxAttempts":3,"hedgingDelay":"0s"}`),
			script:   map[int]step{1: {hang: true}, 2: {hang: true}, 3: {}},
			attempts: 3, hedges: 2, winner: 3, took: 2 * recoilgrpc.ZeroHedgingDelay, cancelled: []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var gone cancels
				l := servePipe(t, &testServer{call: func(ctx context.Context, _ *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
					return play(ctx, tt.script, &gone)
				}})
				p := tt.policy()
				var sum recoil.Summary
				p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
				rc := &recoilgrpc.Client{Policy: p}
				cc := dialPipe(t, l, grpc.WithUnaryInterceptor(rc.Unary))

				start := time.Now()
				var header, trailer metadata.MD
				reply := wrapperspb.String("stale")
				err := cc.Invoke(t.Context(), callMethod, wrapperspb.String("x"), reply, grpc.Header(&header), grpc.Trailer(&trailer))
				took := time.Since(start)
				synctest.Wait() // the servers' handlers have seen their cancellation

				if tt.winner > 0 {
					want := strconv.Itoa(tt.winner)
					if err != nil || reply.GetValue() != "attempt "+want {
						t.Errorf("call = %q, %v; want attempt %s's reply", reply.GetValue(), err, want)
					}
					if got := header.Get("attempt"); !slices.Equal(got, []string{want}) {
						t.Errorf("header %q, want attempt %s's", got, want)
					}
					if got := trailer.Get("attempt-trailer"); !slices.Equal(got, []string{want}) {
						t.Errorf("trailer %q, want attempt %s's", got, want)
					}
				} else if status.Code(err) != tt.code {
					t.Errorf("call: %v (%v), want %v", err, status.Code(err), tt.code)
				}
				if sum.Attempts != tt.attempts || sum.Hedges != tt.hedges {
					t.Errorf("attempts %d, hedges %d; want %d, %d", sum.Attempts, sum.Hedges, tt.attempts, tt.hedges)
				}
				if took != tt.took {
					t.Errorf("the call took %v, want %v", took, tt.took)
				}
				if got := gone.list(); !slices.Equal(got, tt.cancelled) {
					t.Errorf("the server saw attempts %v cancelled, want %v", got, tt.cancelled)
				}
			})
		})
	}
}

// A hedge reaches another server: one channel balances round-robin over
// two, the first attempt lands on one and hangs, the hedge lands on the
// other and answers, and the slow server sees its attempt cancelled.
func TestHedgeAcrossServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type server struct {
			seen      []int
			cancelled []int
		}
		var mu sync.Mutex
		servers := map[string]*server{"a": {}, "b": {}}
		listeners := map[string]*testsvc.PipeListener{}
		for name, s := range servers {
			listeners[name] = servePipe(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
				n := attemptOf(ctx)
				mu.Lock()
				s.seen = append(s.seen, n)
				mu.Unlock()
				if in.GetValue() == "warm up" || n > 1 {
					return wrapperspb.String("from " + name), nil
				}
				<-ctx.Done()
				mu.Lock()
				s.cancelled = append(s.cancelled, n)
				mu.Unlock()
				return nil, status.FromContextError(ctx.Err()).Err()
			}})
		}
		r := manual.NewBuilderWithScheme("pipes")
		r.InitialState(resolver.State{Addresses: []resolver.Address{{Addr: "a"}, {Addr: "b"}}})
		p := &recoil.Policy{Hedge: &recoil.Hedge{Delay: 100 * time.Millisecond}, Budget: recoil.NoBudget}
		var sum recoil.Summary
		p.Observe = func(_ context.Context, s recoil.Summary) { sum = s }
		rc := &recoilgrpc.Client{Policy: p}
		cc := dialReady(t, "pipes:///test", grpc.WithResolvers(r),
			grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
				return listeners[addr].DialContext(ctx, "pipe", addr)
			}),
			grpc.WithUnaryInterceptor(rc.Unary))
		// Until both servers have answered, the balancer may know one: the
		// other subchannel may still be connecting. synctest.Wait lets it
		// finish before the next call, however busy the machine is.
		both := func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(servers["a"].seen) > 0 && len(servers["b"].seen) > 0
		}
		for i := 0; !both(); i++ {
			if _, err := call(t.Context(), cc, "warm up"); err != nil || i == 20 {
				t.Fatalf("warming up: %v after %d calls", err, i)
			}
			synctest.Wait()
		}
		mu.Lock()
		for _, s := range servers {
			s.seen = nil
		}
		mu.Unlock()

		start := time.Now()
		got, err := call(t.Context(), cc, "x")
		took := time.Since(start)
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		slow, fast := servers["a"], servers["b"]
		if slices.Contains(fast.seen, 1) {
			slow, fast = fast, slow
		}
		if err != nil || took != 100*time.Millisecond || sum.Hedges != 1 || sum.Wasted != 1 {
			t.Errorf("call = %q, %v after %v, hedges %d, wasted %d; want the hedge's reply after 100ms, one hedge wasting one attempt", got, err, took, sum.Hedges, sum.Wasted)
		}
		if !slices.Equal(slow.seen, []int{1}) || !slices.Equal(slow.cancelled, []int{1}) || !slices.Equal(fast.seen, []int{2}) {
			t.Errorf("the slow server saw %v (cancelled %v), the other %v; want [1] cancelled, and [2]", slow.seen, slow.cancelled, fast.seen)
		}
	})
}

// Many hedged calls at once through one Client and one channel, each
// attempt decoding into a reply of its own and the caller's header,
// trailer and OnFinish written by one goroutine at a time: the race
// detector watches, and each caller gets its own request's answer from
// the hedge that won.
func TestHedgeConcurrentCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := servePipe(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
			n := attemptOf(ctx)
			grpc.SetHeader(ctx, metadata.Pairs("attempt", strconv.Itoa(n)))
			if n == 1 {
				<-ctx.Done()
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			return wrapperspb.String(in.GetValue() + " from " + strconv.Itoa(n)), nil
		}})
		rc := &recoilgrpc.Client{Policy: &recoil.Policy{Hedge: &recoil.Hedge{Delay: 10 * time.Millisecond}, Budget: recoil.NoBudget}}
		cc := dialPipe(t, l, grpc.WithUnaryInterceptor(rc.Unary))
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				var header metadata.MD
				finished := 0 // written by OnFinish, one attempt at a time
				reply := new(wrapperspb.StringValue)
				req := fmt.Sprint("call ", i)
				err := cc.Invoke(t.Context(), callMethod, wrapperspb.String(req), reply, grpc.Header(&header),
					grpc.OnFinish(func(error) { finished++ }))
				if err != nil || reply.GetValue() != req+" from 2" || !slices.Equal(header.Get("attempt"), []string{"2"}) || finished != 2 {
					t.Errorf("%s = %q, %v, header %v, OnFinish %d times; want the hedge's, and OnFinish once per attempt", req, reply.GetValue(), err, header, finished)
				}
			})
		}
		wg.Wait()
	})
}

// A stream is not raced: through a Client whose policy has a Hedge it
// runs one attempt at a time, the first failing, the second answering,
// however long the first takes past the hedge delay.
func TestHedgeStreamRunsOneAttemptAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var opened, open, most int
		l := servePipe(t, &testServer{chat: func(ss grpc.ServerStream) error {
			opened++
			open++
			most = max(most, open)
			defer func() { open-- }()
			if opened == 1 {
				time.Sleep(5 * time.Second) // past the hedge delay, on the bubble's clock
				return status.Error(codes.Unavailable, "down")
			}
			in := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(in); err != nil {
				return err
			}
			return ss.SendMsg(wrapperspb.String("ok"))
		}})
		rc := &recoilgrpc.Client{Policy: &recoil.Policy{Hedge: &recoil.Hedge{Delay: time.Second}, Budget: recoil.NoBudget}}
		cc := dialPipe(t, l, grpc.WithStreamInterceptor(rc.Stream))
		cs, err := chat(t.Context(), cc)
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.SendMsg(wrapperspb.String("hello")); err != nil {
			t.Fatal(err)
		}
		cs.CloseSend()
		out := new(wrapperspb.StringValue)
		if err := cs.RecvMsg(out); err != nil || out.GetValue() != "ok" || opened != 2 || most != 1 {
			t.Errorf("stream = %q, %v; %d attempts opened, %d at once; want ok from the second, one at a time", out.GetValue(), err, opened, most)
		}
	})
}
