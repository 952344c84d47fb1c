package recoilhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/recoilhttp"
)

// slowBreaker is a breaker that is always closed and counts the slow
// reports it is given.
type slowBreaker struct{ slow atomic.Int32 }

func (*slowBreaker) AllowAt(time.Time) bool              { return true }
func (*slowBreaker) RecordAt(time.Time, breaker.Outcome) {}
func (b *slowBreaker) RecordSlowAt(time.Time)            { b.slow.Add(1) }

// scripted returns a script step answering with status and contentType,
// and a body that writes each chunk after its pause (in the bubble's
// virtual time) and then ends. As net/http's bodies do, it fails with the
// context's error once the request's context ends.
func scripted(status int, contentType string, pause time.Duration, chunks ...string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		pr, pw := io.Pipe()
		ctx := req.Context()
		stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
		go func() {
			defer stop()
			for _, c := range chunks {
				select {
				case <-time.After(pause):
				case <-ctx.Done():
					// Closed here as well: stop, deferred, may cancel the
					// AfterFunc before it runs.
					pw.CloseWithError(ctx.Err())
					return
				}
				if _, err := io.WriteString(pw, c); err != nil {
					return
				}
			}
			pw.Close()
		}()
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}}, Body: pr}, nil
	}
}

const (
	ping  = "event: ping\ndata: {}\n\n"
	delta = "event: content_block_delta\ndata: {\"text\":\"Hi\"}\n\n"
)

// TestTransportSlowStreamReports: the Transport reports a slow body to the
// breakers of the attempt that produced it — the policy's and, under a
// Fallback, the target's — and to no one when SlowStream is off, the body
// is fast, or the response is a failure.
func TestTransportSlowStreamReports(t *testing.T) {
	ttfb := recoilhttp.SlowStream{FirstByte: 2 * time.Second}
	floor := recoilhttp.SlowStream{MinBytesPerSecond: 100, Window: 3 * time.Second}
	sse, plain := "text/event-stream", "application/x-ndjson"
	tests := []struct {
		name       string
		slow       recoilhttp.SlowStream
		noCheck    bool // Transport.NoStreamCheck
		fallback   bool // the attempt goes to a Fallback target with a breaker
		step       func(*http.Request) (*http.Response, error)
		hedge      func(*http.Request) (*http.Response, error) // with a Hedge after 500 ms, the second attempt
		wantPolicy int32
		wantTarget int32
	}{
		{"late first event, read by the stream check", ttfb, false, false, scripted(200, sse, time.Second, ping, ping, ping, delta), nil, 1, 0},
		{"late first event, read by the caller", ttfb, true, false, scripted(200, sse, time.Second, ping, ping, ping, delta), nil, 1, 0},
		{"first event in time", ttfb, false, false, scripted(200, sse, time.Second, ping, delta, delta), nil, 0, 0},
		{"slow bytes", floor, false, false, scripted(200, plain, time.Second, strings.Repeat("x\n", 10)), nil, 0, 0},
		{"slow bytes, long enough to judge", floor, false, false, scripted(200, plain, time.Second, "{}\n", "{}\n", "{}\n", "{}\n", "{}\n"), nil, 1, 0},
		{"to the target's breaker as well", floor, false, true, scripted(200, plain, time.Second, "{}\n", "{}\n", "{}\n", "{}\n", "{}\n"), nil, 1, 1},
		{"off", recoilhttp.SlowStream{}, false, true, scripted(200, sse, time.Second, ping, ping, ping, delta), nil, 0, 0},
		{"hedged: the slow loser is not judged", ttfb, false, false, scripted(200, sse, 10*time.Second, delta), scripted(200, sse, 100*time.Millisecond, delta), 0, 0},
		{"hedged: the slow winner is", ttfb, false, false, scripted(200, sse, 10*time.Second, delta), scripted(200, sse, 2500*time.Millisecond, delta), 1, 0},
		{"a failed response is not metered", ttfb, false, false, scripted(500, plain, 3*time.Second, "{}"), nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var pb, tb slowBreaker
				p := fast()
				p.MaxAttempts = 1
				p.Breaker = &pb
				if tt.fallback {
					p.Fallback = &recoil.Fallback{Targets: []recoil.Target{{Name: "a", Breaker: &tb}}}
				}
				base := &fakeBase{script: []func(*http.Request) (*http.Response, error){tt.step}}
				if tt.hedge != nil {
					p.MaxAttempts = 2
					p.Hedge = &recoil.Hedge{Delay: 500 * time.Millisecond}
					base.script = append(base.script, tt.hedge)
				}
				tr := &recoilhttp.Transport{Base: base, Policy: p, SlowStream: tt.slow, NoStreamCheck: tt.noCheck}
				req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/stream", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if got, gotT := pb.slow.Load(), tb.slow.Load(); got != tt.wantPolicy || gotT != tt.wantTarget {
					t.Errorf("slow reports to the policy's, the target's breaker = %d, %d; want %d, %d", got, gotT, tt.wantPolicy, tt.wantTarget)
				}
			})
		})
	}
}

// TestTransportSlowStreamTrips: streams that answer at once but whose
// first token comes late trip a breaker with a slow-call rate, and the
// next call fails fast without reaching the provider.
func TestTransportSlowStreamTrips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := breaker.Must(breaker.New(breaker.Settings{ConsecutiveFailures: -1, SlowCallRate: 0.5, MinRequests: 4, Window: time.Minute}))
		p := fast()
		p.Breaker = b
		base := &fakeBase{script: []func(*http.Request) (*http.Response, error){
			scripted(200, "text/event-stream", time.Second, ping, ping, ping, delta),
		}}
		tr := &recoilhttp.Transport{Base: base, Policy: p, SlowStream: recoilhttp.SlowStream{FirstByte: 2 * time.Second}}
		for i := range 10 {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://api.example.com/v1/stream", nil)
			resp, err := tr.RoundTrip(req)
			if errors.Is(err, recoil.ErrCircuitOpen) {
				// Each stream's slow report comes with its first event,
				// before its outcome: the fifth report finds four
				// outcomes, all slow.
				if i != 5 {
					t.Errorf("refused call %d, want call 6", i+1)
				}
				if len(base.sent) != 5 {
					t.Errorf("attempts sent = %d, want 5", len(base.sent))
				}
				if c := b.Counts(); c.SlowCalls != 5 || c.Requests != 4 {
					t.Errorf("counts = %+v, want 5 slow calls of 4 requests", c)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		t.Errorf("the breaker never opened: %+v", b.Counts())
	})
}
