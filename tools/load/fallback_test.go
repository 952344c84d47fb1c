package load

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
)

// serveSetInBubble is serveInBubble for a gateway.Set.
func serveSetInBubble(t *testing.T, targets ...gateway.Target) (*gateway.Set, string, http.RoundTripper) {
	t.Helper()
	s, err := gateway.NewSet("", false, targets)
	if err != nil {
		t.Fatal(err)
	}
	url, tr := handleInBubble(t, s, s.Close)
	return s, url, tr
}

func timeline(t *testing.T, name string) gateway.Config {
	t.Helper()
	c, err := gateway.LoadTimeline(filepath.Join("..", "gateway", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFallbackChainOnTheGateway drives the shipped two-provider gateway
// (a primary failing for ten seconds, three ways in turn, and a healthy
// backup) with the shipped chain and without one: the chain answers every
// call within its three attempts, and sends the primary a handful of
// attempts where the policy alone sends it thousands that fail.
func TestFallbackChainOnTheGateway(t *testing.T) {
	chain, err := LoadPolicy(filepath.Join("testdata", "fallback-chain.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := chain.Upstreams(); strings.Join(got, ",") != "primary,backup" {
		t.Fatalf("Upstreams() = %v, want [primary backup]", got)
	}
	alone, err := Preset(PresetDefault)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		chain bool
	}{{"recoil chain", true}, {"primary alone", false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, base, tr := serveSetInBubble(t,
					gateway.Target{Name: "primary", Config: timeline(t, "primary-provider.yaml")},
					gateway.Target{Name: "backup", Config: timeline(t, "backup-provider.yaml")})
				p := alone
				if tc.chain {
					var err error
					if p, err = chain.WithUpstreams(map[string]string{"primary": base + "/primary", "backup": base + "/backup"}); err != nil {
						t.Fatal(err)
					}
				}
				res, err := Run(context.Background(), Config{
					URL: base + "/primary/v1/messages", Body: []byte(`{"model":"m"}`), Callers: 4,
					Duration: 14 * time.Second, MaxRequests: MaxLogicalRequests, Timeout: 10 * time.Second,
					Policy: p, Base: tr,
				})
				if err != nil {
					t.Fatal(err)
				}
				done := res.OK + res.Failed
				primary := s.Gateway("primary").Stats()
				backup := s.Gateway("backup").Stats()
				t.Logf("%s: %d calls, %d ok, %d failed, %d attempts (most in one call %d); primary got %d attempts, backup %d; targets %+v",
					tc.name, res.Calls, res.OK, res.Failed, res.Attempts, res.MaxCallAttempts, primary.Attempts, backup.Attempts, res.Targets)
				if done < 1000 {
					t.Fatalf("only %d calls finished in 14 virtual seconds", done)
				}
				if !tc.chain {
					// Ten seconds of failures the policy cannot retry around:
					// the calls in them fail (each caller pausing after a
					// failure, so they are fewer than the healthy seconds').
					if res.Failed < done/10 || backup.Attempts != 0 {
						t.Errorf("alone: %d of %d calls failed and the backup got %d attempts; want a tenth or more failed, none at the backup", res.Failed, done, backup.Attempts)
					}
					return
				}
				if float64(res.OK) < 0.99*float64(done) {
					t.Errorf("the chain answered %d of %d calls, want at least 99%%", res.OK, done)
				}
				if res.MaxCallAttempts > 3 {
					t.Errorf("a call made %d attempts, more than the policy's 3", res.MaxCallAttempts)
				}
				// The primary is probed once a cooldown (1 s) while overloaded,
				// once a retirement (2 s) while it answers 404, and is out
				// for good at its first spent quota: it sees the attempts of
				// its first second, healthy, and a handful more.
				healthy := primary.Accepted
				if failed := primary.Attempts - healthy; failed > 20 {
					t.Errorf("the primary got %d attempts it failed, want a handful (its cooldowns)", failed)
				}
				if len(res.Targets) != 2 || res.Targets[0].Name != "primary" || res.Targets[1].Left["model not found"] != 0 {
					t.Errorf("Targets = %+v", res.Targets)
				}
				left := res.Targets[0].Left
				if left["model not found"] != 2 || left["quota exhausted"] != 1 || left["overloaded"] == 0 {
					t.Errorf("calls that left the primary: %v, want 2 for a retired model (3 s of 404s, retired for 2 s), 1 for the spent quota (out for good after it) and some overloaded", left)
				}
				if res.Targets[0].Attempts+res.Targets[1].Attempts != res.Attempts {
					t.Errorf("attempts per target %d + %d, want the run's %d", res.Targets[0].Attempts, res.Targets[1].Attempts, res.Attempts)
				}
			})
		})
	}
}

func TestPolicyUpstreams(t *testing.T) {
	chain, err := LoadPolicy(filepath.Join("testdata", "fallback-chain.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Without URLs the run is refused, naming the upstream and the flag.
	err = (&Config{URL: "http://x/primary", Policy: chain}).Validate()
	if err == nil || !strings.Contains(err.Error(), `fallback target "primary" reaches upstream "primary", which has no URL`) {
		t.Errorf("Validate without upstreams: %v", err)
	}
	for _, tc := range []struct {
		name string
		urls map[string]string
		want string
	}{
		{"one missing", map[string]string{"primary": "http://x/a"}, `fallback-chain.yaml:14: fallback.targets[1].upstream: target "backup" reaches upstream "backup", which has no URL: give one (recoil load -upstream backup=URL)`},
		{"not a URL", map[string]string{"primary": "ftp://x", "backup": "http://x/b"}, `target "primary": recoilhttp: endpoint`},
		{"unknown name", map[string]string{"primary": "http://x/a", "backup": "http://x/b", "third": "http://x/c"}, `no fallback target of policy recoil chain reaches upstream "third"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := chain.WithUpstreams(tc.urls); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("WithUpstreams(%v) = %v, want an error containing %q", tc.urls, err, tc.want)
			}
		})
	}
	p, err := chain.WithUpstreams(map[string]string{"primary": "http://x/a", "backup": "http://y/b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Config{URL: "http://x/a/v1", Policy: p}).Validate(); err != nil {
		t.Errorf("Validate with upstreams: %v", err)
	}
	if p.Policy.Fallback == chain.Policy.Fallback {
		t.Error("WithUpstreams shares the fallback's state with the policy it came from")
	}
	if _, err := (Policy{Name: "plain"}).WithUpstreams(map[string]string{"a": "http://x"}); err == nil {
		t.Error("WithUpstreams on a policy without a fallback: no error")
	}
	// A target whose upstream is a URL needs no -upstream.
	own, err := ParsePolicy("own.yaml", []byte("fallback: {targets: [{name: a, upstream: 'http://x/a'}, {name: b, upstream: 'https://y/b'}]}\n"))
	if err != nil || len(own.Upstreams()) != 0 {
		t.Fatalf("ParsePolicy with URL upstreams = %v (upstreams %v)", err, own.Upstreams())
	}
	if err := (&Config{URL: "http://x/a", Policy: own}).Validate(); err != nil {
		t.Errorf("Validate with URL upstreams: %v", err)
	}
}

// TestHedgeCutsTheSlowTail drives the shipped slow-tail gateway (answers
// in 30–50 ms, 3 % in 1–2 s) with and without the shipped hedge at the
// p95: the hedge cuts the p99 by more than half for at most a tenth more
// attempts.
func TestHedgeCutsTheSlowTail(t *testing.T) {
	hedged, err := LoadPolicy(filepath.Join("testdata", "slow-tail-hedge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Preset(PresetDefault)
	if err != nil {
		t.Fatal(err)
	}
	var res [2]*Result
	for i, p := range []Policy{plain, hedged} {
		synctest.Test(t, func(t *testing.T) {
			_, base, tr := serveInBubble(t, timeline(t, "slow-tail.yaml"))
			r, err := Run(context.Background(), Config{
				URL: base + "/v1/messages", Body: []byte(`{"model":"m"}`), Callers: 8,
				Duration: 20 * time.Second, MaxRequests: MaxLogicalRequests, Policy: p, Base: tr,
			})
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		})
	}
	plainRes, hedgedRes := res[0], res[1]
	for _, r := range res {
		t.Logf("%s: %d calls, %d ok, %.3f attempts a call, p50 %v p99 %v; hedges %d started, %d refused, %d wasted",
			r.Policy, r.Calls, r.OK, r.PerCall(), r.Latency.P50, r.Latency.P99, r.Hedges, r.RefusedHedges, r.Wasted)
	}
	if plainRes.Latency.P99 < time.Second {
		t.Fatalf("without a hedge the p99 is %v: the gateway's tail did not show", plainRes.Latency.P99)
	}
	if hedgedRes.Latency.P99*2 > plainRes.Latency.P99 {
		t.Errorf("the hedge's p99 %v is not half the unhedged %v", hedgedRes.Latency.P99, plainRes.Latency.P99)
	}
	if hedgedRes.PerCall() > 1.1*plainRes.PerCall() {
		t.Errorf("the hedge sends %.3f attempts a call against %.3f: more than a tenth more", hedgedRes.PerCall(), plainRes.PerCall())
	}
	if hedgedRes.Hedges == 0 || hedgedRes.OK != hedgedRes.Calls-hedgedRes.Unfinished {
		t.Errorf("hedged run: %d hedges, %d of %d calls ok", hedgedRes.Hedges, hedgedRes.OK, hedgedRes.Calls)
	}
}

// TestAdaptiveLimitFindsTheKnee drives the shipped knee gateway (50 ms
// answers up to 16 in flight, longer beyond) with 64 callers through the
// shipped adaptive limiter: the limit settles near the knee, where the
// callers alone would hold 64 in flight. Half a minute on the bubble's
// clock: from its start at 4 the limit reaches the knee within 10 s (at
// about 7 s), so the second half, the one measured, is settled.
func TestAdaptiveLimitFindsTheKnee(t *testing.T) {
	p, err := LoadPolicy(filepath.Join("testdata", "adaptive.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		g, base, tr := serveInBubble(t, timeline(t, "knee.yaml"))
		res, err := Run(context.Background(), Config{
			URL: base + "/v1/messages", Callers: 64, Duration: 30 * time.Second, MaxRequests: MaxLogicalRequests,
			Policy: p, Base: tr,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d calls, %d ok, goodput %.1f/s, p50 %v; gateway peak in flight %d; limit %s",
			res.Calls, res.OK, res.Goodput(), res.Latency.P50, g.Stats().PeakInFlight, res.LimitSummary())
		if len(res.Limits) < 100 {
			t.Fatalf("%d limit samples in half a minute, want one per 200 ms window", len(res.Limits))
		}
		half := res.Limits[len(res.Limits)/2:]
		sum := 0
		for _, s := range half {
			sum += s.Limit
		}
		if mean := float64(sum) / float64(len(half)); mean < 0.8*16 || mean > 2*16 {
			t.Errorf("mean limit over the second half %.1f, want near the knee of 16 (12.8 to 32)", mean)
		}
		if res.Failed > 0 {
			t.Errorf("%d calls failed: a limiter that queues should fail none", res.Failed)
		}
	})
}
