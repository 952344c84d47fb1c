package recoilgrpc_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilgrpc"
	"github.com/recoil-go/recoil/recoilhttp"
)

// chainPolicy is every hop's: 3 attempts, short waits, and no retry
// budget of its own, so that only the hop protocol bounds the tree.
func chainPolicy() *recoil.Policy {
	return &recoil.Policy{MaxAttempts: 3, Backoff: backoff.Constant(time.Millisecond),
		OverloadBackoff: backoff.Constant(time.Millisecond), Budget: recoil.NoBudget}
}

// grpcHop starts a gRPC server whose handler calls next (with the
// protocol's Server interceptors when proto is set) and returns its
// address.
func grpcHop(t *testing.T, proto bool, next func(ctx context.Context) error) string {
	var opts []grpc.ServerOption
	if proto {
		var hs recoilgrpc.Server
		opts = append(opts, grpc.ChainUnaryInterceptor(hs.Unary))
	}
	return serve(t, &testServer{call: func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		if err := next(ctx); err != nil {
			return nil, status.Error(codes.Unavailable, "below: "+err.Error())
		}
		return in, nil
	}}, opts...)
}

// grpcCaller returns a call to the gRPC service at addr through a
// recoilgrpc Client: 3 attempts, the hop metadata sent when proto is set.
func grpcCaller(t *testing.T, addr string, proto bool, edgeBudget int) func(ctx context.Context) error {
	rc := &recoilgrpc.Client{Policy: chainPolicy(), Hop: proto, EdgeBudget: edgeBudget}
	cc := dial(t, addr, grpc.WithUnaryInterceptor(rc.Unary))
	return func(ctx context.Context) error {
		_, err := call(ctx, cc, "x")
		return err
	}
}

// httpHop starts an HTTP service whose handler calls next (behind the
// protocol's Middleware when proto is set) and returns its URL.
func httpHop(t *testing.T, proto bool, next func(ctx context.Context) error) string {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := next(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	if proto {
		h = recoilhttp.NewMiddleware(h, recoilhttp.MiddlewareConfig{})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// httpCaller returns a call to url through a recoilhttp Transport.
func httpCaller(t *testing.T, url string, proto bool, edgeBudget int) func(ctx context.Context) error {
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	c := &http.Client{Transport: &recoilhttp.Transport{Base: base, Policy: chainPolicy(), Hop: proto, EdgeBudget: edgeBudget}}
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return status.Error(codes.Unavailable, resp.Status) // what the hop above it answers with
		}
		return nil
	}
}

// Three real hops on loopback above a leaf that is down, each retrying 3
// times: 3×3×3 = 27 attempts reach the leaf when each hop owns its
// retries, and 3 once the edge's budget of 2 travels down the tree and
// what each hop spent travels back — whether every link is gRPC, or the
// chain mixes gRPC and HTTP either way round.
func TestChain(t *testing.T) {
	const g, h = "gRPC", "HTTP"
	chains := [][3]string{{g, g, g}, {h, g, h}, {g, h, g}}
	for _, links := range chains {
		for _, proto := range []bool{false, true} {
			want := 27
			if proto {
				want = 3
			}
			name := links[0] + " → " + links[1] + " → " + links[2] + ", without the protocol"
			if proto {
				name = links[0] + " → " + links[1] + " → " + links[2] + ", edge budget 2"
			}
			t.Run(name, func(t *testing.T) {
				var leafSeen atomic.Int32
				next := func(context.Context) error {
					leafSeen.Add(1)
					return status.Error(codes.Unavailable, "the leaf is down")
				}
				// Build from the leaf up: link i is the protocol the hop
				// above uses to call the hop below.
				for i := 2; i >= 0; i-- {
					edgeBudget := 0
					if i == 0 {
						edgeBudget = 2
					}
					if links[i] == g {
						next = grpcCaller(t, grpcHop(t, proto, next), proto, edgeBudget)
					} else {
						next = httpCaller(t, httpHop(t, proto, next), proto, edgeBudget)
					}
				}
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				if err := next(ctx); status.Code(err) != codes.Unavailable {
					t.Fatalf("edge call: %v, want UNAVAILABLE from the leaf", err)
				}
				if got := int(leafSeen.Load()); got != want {
					t.Errorf("the leaf saw %d attempts, want %d", got, want)
				}
			})
		}
	}
}
