package recoilgrpc_test

import (
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilgrpc"
)

// A stream is retried until its first response message arrives, with the
// messages sent so far replayed in order (and CloseSend after them); after
// the first message a failure reaches the caller; a stream that has sent
// more than the replay buffer holds is not retried.
func TestStream(t *testing.T) {
	tests := []struct {
		name     string
		sent     []string
		maxBytes int
		// fail(n, got) says how attempt n ends after receiving got: a
		// number of echoes to send first, then a status (nil: OK).
		fail     func(n int) (echoes int, err error)
		attempts int
		recv     []string // the messages the caller receives
		code     codes.Code
		reason   recoil.Reason
	}{
		{name: "a failure before the first message is retried, with the sent messages replayed",
			sent: []string{"a", "b"},
			fail: func(n int) (int, error) {
				if n == 1 {
					return 0, status.Error(codes.Unavailable, "not yet")
				}
				return 2, nil
			},
			attempts: 2, recv: []string{"a", "b"}},
		{name: "after the first message a failure reaches the caller",
			sent:     []string{"a", "b"},
			fail:     func(int) (int, error) { return 1, status.Error(codes.Unavailable, "gone") },
			attempts: 1, recv: []string{"a"}, code: codes.Unavailable},
		{name: "a stream that ends cleanly with no message commits",
			sent:     []string{"a"},
			fail:     func(int) (int, error) { return 0, nil },
			attempts: 1},
		{name: "failing until attempts run out",
			sent:     []string{"a"},
			fail:     func(int) (int, error) { return 0, status.Error(codes.Unavailable, "down") },
			attempts: 3, code: codes.Unavailable, reason: recoil.ReasonAttempts},
		{name: "more than the replay buffer: not retried",
			sent: []string{"0123456789", "0123456789"}, maxBytes: 16,
			fail:     func(int) (int, error) { return 0, status.Error(codes.Unavailable, "not yet") },
			attempts: 1, code: codes.Unavailable, reason: recoil.ReasonPermanent},
		{name: "a permanent status is not retried",
			sent:     []string{"a"},
			fail:     func(int) (int, error) { return 0, status.Error(codes.InvalidArgument, "no") },
			attempts: 1, code: codes.InvalidArgument, reason: recoil.ReasonPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var (
				seen atomic.Int32
				mu   sync.Mutex
				got  [][]string // what each attempt received
			)
			addr := serve(t, &testServer{chat: func(ss grpc.ServerStream) error {
				n := int(seen.Add(1))
				var in []string
				for {
					m := new(wrapperspb.StringValue)
					if err := ss.RecvMsg(m); err != nil {
						break
					}
					in = append(in, m.GetValue())
				}
				mu.Lock()
				got = append(got, in)
				mu.Unlock()
				echoes, err := tt.fail(n)
				for _, s := range in[:min(echoes, len(in))] {
					if err := ss.SendMsg(wrapperspb.String(s)); err != nil {
						return err
					}
				}
				return err
			}})
			p, sums := observed()
			rc := &recoilgrpc.Client{Policy: p, MaxReplayBytes: tt.maxBytes}
			cc := dial(t, addr, grpc.WithStreamInterceptor(rc.Stream))
			cs, err := chat(t.Context(), cc)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.sent {
				if err := cs.SendMsg(wrapperspb.String(s)); err != nil {
					t.Fatalf("SendMsg(%q): %v", s, err)
				}
			}
			if err := cs.CloseSend(); err != nil {
				t.Fatal(err)
			}
			var recv []string
			for {
				m := new(wrapperspb.StringValue)
				err = cs.RecvMsg(m)
				if err != nil {
					break
				}
				recv = append(recv, m.GetValue())
			}
			if errors.Is(err, io.EOF) {
				err = nil
			}
			if status.Code(err) != tt.code {
				t.Errorf("the stream ended with %v, want %v", err, tt.code)
			}
			if !slices.Equal(recv, tt.recv) {
				t.Errorf("received %q, want %q", recv, tt.recv)
			}
			if n := int(seen.Load()); n != tt.attempts {
				t.Errorf("the server saw %d attempts, want %d", n, tt.attempts)
			}
			mu.Lock()
			for i, in := range got {
				if tt.maxBytes == 0 && !slices.Equal(in, tt.sent) {
					t.Errorf("attempt %d received %q, want every message sent, %q", i+1, in, tt.sent)
				}
			}
			mu.Unlock()
			s := sums()
			if len(s) != 1 {
				t.Fatalf("Observe called %d times, want once", len(s))
			}
			if s[0].Reason != tt.reason {
				t.Errorf("reason = %v, want %v", s[0].Reason, tt.reason)
			}
		})
	}
}
