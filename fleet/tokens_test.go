package fleet

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/testsvc"
	"github.com/recoil-go/recoil/recoilhttp"
)

// clientFor returns a Client with Redis (shared) or without (local).
func clientFor(t *testing.T, shared bool) *Client {
	if shared {
		return replicasOne(t)
	}
	return localClient(t, 1)
}

// A Guard over a Tokens allowance charges each attempt the cost its call
// carries; over a Requests allowance, one unit whatever the cost.
func TestGuardCost(t *testing.T) {
	tests := []struct {
		name  string
		unit  Unit
		cost  int64 // 0: no WithCost
		calls int   // that go before the allowance of 10,000 refuses one
	}{
		{"tokens, 3000 a call", Tokens, 3000, 3},
		{"tokens, no cost: a unit a call", Tokens, 0, 10_000},
		{"requests, cost ignored", Requests, 3000, 10_000},
	}
	for _, tt := range tests {
		for _, shared := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "/local", true: "/redis"}[shared], func(t *testing.T) {
				a := mustAllowance(t, clientFor(t, shared), AllowanceConfig{Name: "org", Unit: tt.unit, Limit: 10_000, Window: 1000 * time.Hour})
				p := &recoil.Policy{Budget: a.Guard(Interactive, nil)}
				ctx := context.Background()
				if tt.cost > 0 {
					ctx = recoil.WithCost(ctx, tt.cost)
				}
				for i := range tt.calls + 1 {
					err := recoil.Do(ctx, p, func(context.Context) error { return nil })
					switch {
					case i < tt.calls && err != nil:
						t.Fatalf("call %d: %v, want success", i+1, err)
					case i == tt.calls && !errors.Is(err, recoil.ErrBudget):
						t.Fatalf("call %d: %v, want ErrBudget", i+1, err)
					}
				}
			})
		}
	}
}

// Chained Guards hold each attempt to a tokens meter and a requests meter;
// the tokens a refused attempt was charged are put back, into the lease or
// the local share.
func TestGuardChain(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "redis"}[shared], func(t *testing.T) {
			c := clientFor(t, shared)
			tok := mustAllowance(t, c, AllowanceConfig{Name: "tpm", Unit: Tokens, Limit: 10_000, Window: 1000 * time.Hour, Lease: 1000})
			req := mustAllowance(t, c, AllowanceConfig{Name: "rpm", Limit: 2, Window: 1000 * time.Hour, Lease: 1})
			p := &recoil.Policy{Budget: tok.Guard(Interactive, req.Guard(Interactive, nil))}
			ctx := recoil.WithCost(context.Background(), 300)
			for i := range 3 {
				err := recoil.Do(ctx, p, func(context.Context) error { return nil })
				if (err == nil) != (i < 2) {
					t.Fatalf("call %d: %v; the requests meter allows 2", i+1, err)
				}
			}
			if shared {
				if got := tok.StateAt(time.Time{}).Leased[0]; got != 1000-600 {
					t.Errorf("tokens lease holds %d, want 400: two calls of 300 charged, the refused one put back", got)
				}
				return
			}
			if !tok.AllowNAt(time.Time{}, Interactive, 10_000-600) || tok.AllowNAt(time.Time{}, Interactive, 1) {
				t.Error("the local share does not hold exactly the 9,400 two calls of 300 left")
			}
		})
	}
}

// SettleAt refunds what an attempt did not use (never more than it was
// charged) and charges what it used beyond its estimate, against the
// shared bucket and against the local share alike.
func TestSettle(t *testing.T) {
	type op struct {
		allow           int64 // AllowNAt this many, if > 0
		want            bool
		charged, actual int64 // then SettleAt, if charged > 0
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"refund", []op{{500, true, 500, 200}, {800, true, 0, 0}, {1, false, 0, 0}}},
		{"refund never above the charge", []op{{500, true, 500, 0}, {1000, true, 0, 0}, {1, false, 0, 0}}},
		{"shortfall owed", []op{{200, true, 200, 600}, {500, false, 0, 0}, {400, true, 0, 0}, {1, false, 0, 0}}},
		{"exact", []op{{300, true, 300, 300}, {700, true, 0, 0}, {1, false, 0, 0}}},
	}
	for _, tt := range tests {
		for _, shared := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "/local", true: "/redis"}[shared], func(t *testing.T) {
				synctestIf(t, !shared, func(t *testing.T) {
					a := mustAllowance(t, clientFor(t, shared), AllowanceConfig{Name: "org", Unit: Tokens, Limit: 1000, Window: 1000 * time.Hour, Lease: 100})
					now := time.Now()
					for i, o := range tt.ops {
						if o.allow > 0 {
							if got := a.AllowNAt(now, Interactive, o.allow); got != o.want {
								t.Fatalf("op %d: AllowNAt(%d) = %v, want %v", i, o.allow, got, o.want)
							}
						}
						if o.charged > 0 {
							a.SettleAt(now, Interactive, o.charged, o.actual)
						}
					}
				})
			})
		}
	}
}

// A refund that comes after the lease expired (a long answer) goes back to
// the shared bucket.
func TestSettleAfterLease(t *testing.T) {
	c := replicasOne(t)
	cfg := AllowanceConfig{Name: "org", Unit: Tokens, Limit: 1000, Window: 1000 * time.Hour, Lease: 100}
	a := mustAllowance(t, c, cfg)
	now := time.Now()
	if !a.AllowNAt(now, Interactive, 500) {
		t.Fatal("refused")
	}
	a.SettleAt(now.Add(time.Minute), Interactive, 500, 200) // the lease is long gone
	fresh := mustAllowance(t, c, cfg)
	if !fresh.AllowNAt(time.Time{}, Interactive, 800) {
		t.Error("the 300 refunded after the lease expired did not reach the shared bucket")
	}
	if fresh.AllowNAt(time.Time{}, Interactive, 1) {
		t.Error("the bucket holds more than the refund gave back")
	}
}

// synctestIf runs f in a synctest bubble when bubble is set: a test
// against real Redis cannot run in one (its clock and sockets are real).
func synctestIf(t *testing.T, bubble bool, f func(*testing.T)) {
	if bubble {
		synctest.Test(t, f)
		return
	}
	f(t)
}

// pacingHeader says 100 of 6000 tokens remain until a reset 30 s away:
// 100 · 1 min < 6000 · 30 s, so the allowance paces.
var pacingHeader = []string{"x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "100", "x-ratelimit-reset-tokens", "30s"}

// TestPacingLocal pins the pacing rule on the local share, on virtual
// time: 10-token attempts tried every 100 ms go once every 3 s while the
// pace lasts, ten of them in its 30 s, where the bucket alone (what
// remains and a refill of 100 a second) would let every one go.
func TestPacingLocal(t *testing.T) {
	tests := []struct {
		name      string
		h         []string
		wantGone  int
		wantAfter int // in the 30 s after the reset
	}{
		{"paced", pacingHeader, 10, 300},
		{"nothing left", []string{"x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "30s"}, 0, 300},
		{"enough left", []string{"x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "3100", "x-ratelimit-reset-tokens", "30s"}, 300, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := mustAllowance(t, localClient(t, 1), AllowanceConfig{Name: "org", Unit: Tokens, Limit: 6000})
				if err := a.Learn(hdr(tt.h...), time.Time{}); err != nil {
					t.Fatal(err)
				}
				count := func() int {
					n := 0
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					for range 300 {
						if a.AllowNAt(time.Time{}, Interactive, 10) {
							n++
						}
						<-tick.C
					}
					return n
				}
				if got := count(); got != tt.wantGone {
					t.Errorf("%d attempts went in the 30 s to the reset, want %d", got, tt.wantGone)
				}
				if got := count(); got != tt.wantAfter {
					t.Errorf("%d attempts went in the 30 s after it, want %d", got, tt.wantAfter)
				}
			})
		})
	}
}

// TestPacingShared: a response one process learns from paces the whole
// fleet through Redis; a later one that says enough remains ends it.
func TestPacingShared(t *testing.T) {
	cs, _ := replicas(t, 2, Config{})
	cfg := AllowanceConfig{Name: "org", Unit: Tokens, Limit: 6000, Lease: 10}
	a, b := mustAllowance(t, cs[0], cfg), mustAllowance(t, cs[1], cfg)
	if err := a.Learn(hdr(pacingHeader...), time.Time{}); err != nil {
		t.Fatal(err)
	}
	// One lease of 10 goes; the next waits 3 s for the pace, in either
	// process. (A busy machine cannot take 3 s between these lines.)
	if !b.AllowNAt(time.Time{}, Interactive, 10) {
		t.Fatal("paced: the first lease was refused")
	}
	for _, x := range []*Allowance{a, b} {
		if x.AllowNAt(time.Time{}, Interactive, 10) {
			t.Fatal("paced: a second lease went at once")
		}
	}
	r, _ := newRedis(t, testsvc.Redis(t))
	key := cs[0].key("org", "pace")
	if ttl := r.PTTL(context.Background(), key).Val(); ttl <= 29*time.Second || ttl > 32*time.Second {
		t.Errorf("the pace key's TTL is %v, want the 30 s to the reset and a second", ttl)
	}
	// Enough remains: the pacing ends, and what the bucket holds may go at
	// once. (The bucket holds what the first response said remained, less
	// the lease of 10, and its refill of 100 a second: a later response
	// never raises it.)
	if err := a.Learn(hdr("x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "5000", "x-ratelimit-reset-tokens", "10s"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if n := r.Exists(context.Background(), key).Val(); n != 0 {
		t.Error("the pace key outlived a response that ended the pacing")
	}
	fresh := func() *Allowance { // no lease, no refusal cached
		return mustAllowance(t, cs[0], AllowanceConfig{Name: "org", Unit: Tokens, Limit: 6000, Lease: 1})
	}
	a2 := fresh()
	n := 0
	for a2.AllowNAt(time.Time{}, Interactive, 10) {
		n++
	}
	if n < 9 || n > 30 {
		t.Errorf("unpaced, %d attempts of 10 went at once, want the 90 left and what refilled: 9, and a few", n)
	}
	// Nothing remains: nothing goes until the reset.
	if err := a.Learn(hdr("x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "20s"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if fresh().AllowNAt(time.Time{}, Interactive, 1) {
		t.Error("a unit went after the provider said none remain")
	}
}

// rtFunc is a RoundTripper of a function.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The whole path: a Transport under a Guard over a Tokens allowance, and a
// Learner under it. The request is charged its estimate from the shared
// bucket; the provider's headers teach the allowance; the usage in the body
// settles the charge back into the process's lease.
func TestTokensEndToEnd(t *testing.T) {
	tok := mustAllowance(t, replicasOne(t), AllowanceConfig{Name: "tpm", Unit: Tokens, Limit: 100_000, Lease: 1000})
	provider := rtFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		h := hdr("Content-Type", "application/json", "x-ratelimit-limit-tokens", "90000",
			"x-ratelimit-remaining-tokens", "89000", "x-ratelimit-reset-tokens", "660ms")
		return &http.Response{StatusCode: 200, Header: h, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42}}`))}, nil
	})
	client := &http.Client{Transport: &recoilhttp.Transport{
		Base:   &Learner{Base: provider, Allowances: []*Allowance{tok}},
		Policy: &recoil.Policy{Budget: tok.Guard(Interactive, nil)},
	}}
	body := `{"model":"gpt-4.1","max_tokens":500,"messages":[{"role":"user","content":"Hi"}]}`
	est := recoilhttp.EstimateTokens([]byte(body))
	resp, err := client.Post("http://api.example/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.StateAt(time.Time{}).Leased[0]; got != 1000-est {
		t.Errorf("the lease holds %d before the body is read, want 1000 less the estimate %d", got, est)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := tok.StateAt(time.Time{}).Leased[0]; got != 1000-42 {
		t.Errorf("the lease holds %d after the body, want 958: the estimate settled to the 42 used", got)
	}
	if got := tok.Limit(); got != 90_000 {
		t.Errorf("Limit() = %d, want the learned 90000", got)
	}
}
