package fleet

import (
	"bytes"
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/internal/testsvc"
)

// startCluster starts three redis-server masters of its own and joins them
// into a Redis Cluster, and returns a client of it.
func startCluster(t *testing.T) *redis.ClusterClient {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		if testsvc.Required() {
			t.Fatalf("redis-cli is not on PATH and RECOIL_REQUIRE_SERVICES=1: %v", err)
		}
		t.Skipf("skipping: redis-cli is not on PATH (%v); the cluster test creates a cluster of its own; RECOIL_REQUIRE_SERVICES=1 turns this skip into a failure", err)
	}
	var addrs []string
	for range 3 {
		s := startRedis(t, 0, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		addrs = append(addrs, s.addr())
	}
	out, err := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	// Every node must agree the cluster is up before a decision is asked.
	for _, a := range addrs {
		r := redis.NewClient(&redis.Options{Addr: a})
		ok := false
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) { // poll interval
			if info, err := r.ClusterInfo(context.Background()).Result(); err == nil && strings.Contains(info, "cluster_state:ok") {
				ok = true
				break
			}
		}
		r.Close()
		if !ok {
			t.Fatalf("the cluster node at %s did not report cluster_state:ok within 20 s", a)
		}
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// On a real three-master Redis Cluster, allowances and budgets whose names
// hold braces (which once broke the hash tag, so every script failed with
// CROSSSLOT and every decision silently fell back to the local share) and
// bytes that are not UTF-8 are decided in Redis: admitted per window within
// the allowance's bound, and not one call refused or unreached.
func TestCluster(t *testing.T) {
	rdb := startCluster(t)
	c, err := New(Config{Redis: rdb, Prefix: testPrefix(t), Timeout: time.Second, Replicas: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const (
		limit  = 50
		burst  = 5
		lease  = 2
		window = 500 * time.Millisecond
	)
	names := []string{"org-42/openai", "}", "{", "a}b{c", "{org}", "\xff\xfe latin-1 \xe9", "名前/モデル"}
	for _, name := range names {
		a := mustAllowance(t, c, AllowanceConfig{Name: name, Limit: limit, Window: window, Burst: burst, Lease: lease})
		// Ask for far more than the limit over one window of wall time:
		// the shared bucket admits at most the limit's share of the time
		// passed, the burst and the lease this process holds.
		start := time.Now()
		admitted := 0
		for time.Since(start) < window {
			if a.Allow(Interactive) {
				admitted++
			}
		}
		elapsed := time.Since(start)
		bound := int(float64(limit)*float64(elapsed)/float64(window)) + burst + lease + 1
		// The bound holds however slowly a loaded machine runs the loop;
		// that the decisions were Redis's, not the local share's, is what
		// Stats says below.
		if admitted > bound || admitted < 1 {
			t.Errorf("allowance %q: %d admitted in %v, want between 1 and %d", name, admitted, elapsed, bound)
		}
		t.Logf("allowance %q: %d admitted in %v (limit %d per %v)", name, admitted, elapsed.Round(time.Millisecond), limit, window)

		b := mustBudget(t, c, BudgetConfig{Name: name, Lease: 1, Refresh: time.Nanosecond})
		for range 5 {
			b.RetryAt(time.Time{}, budget.CauseError)
		}
	}
	if s := c.Stats(); s.Refused != 0 || s.Unreachable != 0 {
		t.Errorf("Stats() = %+v on a healthy cluster, want no decision made locally", s)
	}
	if !c.Shared() {
		t.Error("the Client is deciding locally on a healthy cluster")
	}
}

// A Redis that answers with an error reply is not marked down, and each such
// decision is counted (and logged once): a fallback while Redis answers is
// visible.
func TestRefusedCallsAreCounted(t *testing.T) {
	r, _ := newRedis(t, testsvc.Redis(t))
	prefix := testPrefix(t)
	var log bytes.Buffer
	c, err := New(Config{Redis: r, Prefix: prefix, Timeout: time.Second, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := mustAllowance(t, c, AllowanceConfig{Name: "wrong-type", Limit: 1000, Lease: 1})
	// The bucket's key holds a list: every script on it fails with WRONGTYPE.
	key := c.key("wrong-type", "tat")
	if err := r.RPush(context.Background(), key, "x").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Del(context.Background(), key) })
	for range 3 {
		a.Allow(Interactive) // decided from the local share
	}
	if s := c.Stats(); s.Refused == 0 || s.Unreachable != 0 {
		t.Errorf("Stats() = %+v after WRONGTYPE replies, want Refused > 0 and nothing unreachable", s)
	}
	if u, r := c.Fallbacks(); u != c.Stats().Unreachable || r != c.Stats().Refused {
		t.Errorf("Fallbacks() = %d, %d, want Stats() %+v", u, r, c.Stats())
	}
	if !c.Shared() {
		t.Error("Redis answered, but the Client marked it down")
	}
	if n := strings.Count(log.String(), "\n"); n != 1 || !strings.Contains(log.String(), "WRONGTYPE") {
		t.Errorf("logged %d lines, want one naming the reply:\n%s", n, log.String())
	}
}

// Fallbacks, the method the metrics adapters read, returns Stats' counts
// whatever the cause of the fallback.
func TestFallbacksAgreeWithStats(t *testing.T) {
	tests := []struct {
		name string
		// setup returns a Client and a function that makes it fall back.
		setup          func(t *testing.T) (*Client, func())
		wantUnr, wantR uint64
	}{{
		name: "no Redis",
		setup: func(t *testing.T) (*Client, func()) {
			c := localClient(t, 1)
			a := mustAllowance(t, c, AllowanceConfig{Name: "local", Limit: 10})
			return c, func() { a.Allow(Interactive) }
		},
	}, {
		name: "nothing listening",
		setup: func(t *testing.T) (*Client, func()) {
			r, _ := newRedis(t, "127.0.0.1:1")
			c := must(New(Config{Redis: r, Timeout: 100 * time.Millisecond}))(t)
			t.Cleanup(func() { c.Close() })
			a := mustAllowance(t, c, AllowanceConfig{Name: "away", Limit: 10})
			return c, func() { a.Allow(Interactive) } // after the first, decided without a call
		},
		wantUnr: 1,
	}, {
		name: "wrong type",
		setup: func(t *testing.T) (*Client, func()) {
			r, _ := newRedis(t, testsvc.Redis(t))
			c := must(New(Config{Redis: r, Prefix: testPrefix(t), Timeout: time.Second}))(t)
			t.Cleanup(func() { c.Close() })
			a := mustAllowance(t, c, AllowanceConfig{Name: "wrong-type", Limit: 1000, Lease: 1})
			key := c.key("wrong-type", "tat")
			if err := r.RPush(context.Background(), key, "x").Err(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Del(context.Background(), key) })
			return c, func() { a.Allow(Interactive) }
		},
		wantR: 3,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fallBack := tt.setup(t)
			for range 3 {
				fallBack()
			}
			u, r := c.Fallbacks()
			if s := c.Stats(); u != s.Unreachable || r != s.Refused {
				t.Errorf("Fallbacks() = %d, %d, want Stats() %+v", u, r, s)
			}
			if u != tt.wantUnr || r != tt.wantR {
				t.Errorf("Fallbacks() = %d, %d, want %d, %d", u, r, tt.wantUnr, tt.wantR)
			}
		})
	}
}

// A prefix with a brace would break the hash tag: New refuses it.
func TestPrefixWithBrace(t *testing.T) {
	for _, p := range []string{"a{", "}b", "{x}:"} {
		if _, err := New(Config{Prefix: p}); err == nil {
			t.Errorf("New(Prefix %q) = nil error, want the brace refused", p)
		}
	}
}
