package fleet

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/recoil-go/recoil/budget"
	"github.com/recoil-go/recoil/internal/leakcheck"
	"github.com/recoil-go/recoil/internal/testsvc"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// counter is a go-redis hook counting the commands and pipelines sent: the
// round trips.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// newRedis returns a client for addr with context deadlines honoured and a
// round-trip counter, closed when the test ends.
func newRedis(t testing.TB, addr string) (*redis.Client, *counter) {
	t.Helper()
	r := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	var c counter
	r.AddHook(&c)
	t.Cleanup(func() { r.Close() })
	return r, &c
}

// testPrefix is a key prefix no other test, run or process shares.
func testPrefix(t testing.TB) string {
	return fmt.Sprintf("recoil:test:%s:%d:%d:", strings.ReplaceAll(t.Name(), "/", "."), os.Getpid(), time.Now().UnixNano())
}

// replicas returns n Clients sharing one Redis and one prefix, as n
// processes would; each is closed when the test ends.
func replicas(t testing.TB, n int, cfg Config) ([]*Client, *counter) {
	t.Helper()
	r, cnt := newRedis(t, testsvc.Redis(t))
	if cfg.Prefix == "" {
		cfg.Prefix = testPrefix(t)
	}
	cfg.Redis = r
	if cfg.Replicas == 0 {
		cfg.Replicas = n
	}
	if cfg.Timeout == 0 {
		// Generous: these tests are about sharing, not about falling back,
		// and a loaded machine under -race can take 50 ms for a round trip.
		cfg.Timeout = 2 * time.Second
	}
	cs := make([]*Client, n)
	for i := range cs {
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs[i] = c
	}
	return cs, cnt
}

// must(v, err)(t) returns v, failing the test on err.
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func mustAllowance(t testing.TB, c *Client, a AllowanceConfig) *Allowance {
	t.Helper()
	return must(c.Allowance(a))(t)
}

func mustBudget(t testing.TB, c *Client, b BudgetConfig) *Budget {
	t.Helper()
	return must(c.Budget(b))(t)
}

// localClient is a Client without Redis, closed when the test ends.
func localClient(t testing.TB, replicas int) *Client {
	t.Helper()
	c := must(New(Config{Replicas: replicas}))(t)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConfigErrors(t *testing.T) {
	plain := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer plain.Close()
	if _, err := New(Config{Redis: plain}); err == nil {
		t.Errorf("New accepted a Redis client without ContextTimeoutEnabled")
	}
	if _, err := New(Config{LeaseShare: 2}); err == nil {
		t.Errorf("New accepted LeaseShare 2")
	}
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		a    AllowanceConfig
	}{
		{"no name", AllowanceConfig{Limit: 1}},
		{"no limit", AllowanceConfig{Name: "a"}},
		{"negative burst", AllowanceConfig{Name: "a", Limit: 1, Burst: -1}},
		{"negative lease", AllowanceConfig{Name: "a", Limit: 1, Lease: -1}},
		{"reserved 1", AllowanceConfig{Name: "a", Limit: 1, Reserved: 1}},
		{"unknown unit", AllowanceConfig{Name: "a", Limit: 1, Unit: 7}},
	}
	for _, tt := range tests {
		if _, err := c.Allowance(tt.a); err == nil {
			t.Errorf("%s: Allowance(%+v) succeeded, want an error", tt.name, tt.a)
		}
	}
	if _, err := c.Budget(BudgetConfig{}); err == nil {
		t.Errorf("Budget without a name succeeded")
	}
	for _, tt := range []struct {
		name string
		b    BudgetConfig
		want string // in the error
	}{
		{"negative lease", BudgetConfig{Name: "dep", Lease: -1}, `"dep": Lease -1`},
		{"share and bucket", BudgetConfig{Name: "dep", Share: &budget.ShareConfig{}, TokenBucket: &budget.TokenBucketConfig{}}, "set one of"},
		{"bucket and ratio", BudgetConfig{Name: "dep", TokenBucket: &budget.TokenBucketConfig{}, Ratio: &budget.RatioConfig{}}, "set one of"},
		{"share and ratio", BudgetConfig{Name: "dep", Share: &budget.ShareConfig{}, Ratio: &budget.RatioConfig{}}, "set one of"},
		{"share percent NaN", BudgetConfig{Name: "dep", Share: &budget.ShareConfig{Percent: math.NaN()}}, "ShareConfig.Percent"},
		{"share reserve too large", BudgetConfig{Name: "dep", Share: &budget.ShareConfig{Reserve: 1 << 41}}, "ShareConfig.Reserve"},
	} {
		if _, err := c.Budget(tt.b); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Budget = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	c.Close()
	if _, err := c.Allowance(AllowanceConfig{Name: "a", Limit: 1}); err != ErrClosed {
		t.Errorf("Allowance after Close: %v, want ErrClosed", err)
	}
}

// Without Redis every decision comes from the local share, 1/Replicas of
// the limit, and the clock is the caller's.
func TestLocalShare(t *testing.T) {
	c := localClient(t, 4)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name            string
		reserved        float64
		class           Class
		first, perMinue int
	}{
		{"interactive gets a quarter", 0, Interactive, 100, 100},
		{"background gets a quarter of the unreserved half", 0.5, Background, 50, 50},
		{"interactive gets the reserve too", 0.5, Interactive, 100, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustAllowance(t, c, AllowanceConfig{Name: tt.name, Limit: 400, Reserved: tt.reserved})
			count := func(now time.Time) int {
				n := 0
				for a.AllowAt(now, tt.class) {
					n++
				}
				return n
			}
			if got := count(start); got != tt.first {
				t.Errorf("admitted %d at once, want %d", got, tt.first)
			}
			if got := count(start.Add(time.Minute)); got != tt.perMinue {
				t.Errorf("admitted %d a minute later, want %d", got, tt.perMinue)
			}
		})
	}
}

// Three processes' worth of Clients, two goroutines each, on one
// allowance: never more than Burst + the rate + a lease each. (The 90 %
// floor is TestProcessesShareOneAllowance's, on a server of its own; here
// the floor is only that sharing starves no one: half the rate's worth of
// the first 500 ms.) The goroutines decide for 500 ms, and on until the
// floor is met, for up to 10 s: a machine busy with other work may run
// them for little of the first 500 ms, and the bound is over however long
// they ran.
func TestAllowanceSharedBound(t *testing.T) {
	const (
		limit  = 400 // per second
		burst  = 40
		lease  = 8
		nprocs = 3
	)
	cs, _ := replicas(t, nprocs, Config{})
	var admitted atomic.Int64
	var wg sync.WaitGroup
	const span = 500 * time.Millisecond
	floor := int64(limit * span.Seconds() / 2)
	start := time.Now()
	stop, giveUp := start.Add(span), start.Add(10*time.Second)
	for _, c := range cs {
		a := mustAllowance(t, c, AllowanceConfig{Name: "org", Limit: limit, Window: time.Second, Burst: burst, Lease: lease})
		for range 2 {
			wg.Go(func() {
				for now := time.Now(); now.Before(stop) || (admitted.Load() < floor && now.Before(giveUp)); now = time.Now() {
					if a.Allow(Interactive) {
						admitted.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	d := time.Since(start)
	bound := burst + int64(limit*d.Seconds()) + nprocs*lease
	if got := admitted.Load(); got > bound || got < floor {
		t.Errorf("admitted %d in %v, want between %d (half the rate) and %d (burst + rate + leases)", got, d, floor, bound)
	}
}

func TestRoundTripsPerThousand(t *testing.T) {
	cs, cnt := replicas(t, 1, Config{})
	// Limit 5,000 a minute: a 2 % lease is 100 units, ten leases a thousand.
	a := mustAllowance(t, cs[0], AllowanceConfig{Name: "org", Limit: 5000})
	a.Allow(Interactive) // the connection's handshake, the script's first load and the first lease
	before := cnt.n.Load()
	for i := range 1000 {
		if !a.Allow(Interactive) {
			t.Fatalf("decision %d refused with the allowance far from spent", i)
		}
	}
	if got := cnt.n.Load() - before; got > 10 {
		t.Errorf("%d round trips for 1,000 decisions, want ≤ 10", got)
	}
}

func TestBackgroundShare(t *testing.T) {
	cs, _ := replicas(t, 1, Config{})
	a := mustAllowance(t, cs[0], AllowanceConfig{Name: "org", Limit: 100, Window: time.Hour, Reserved: 0.3, Lease: 1})
	count := func(c Class) int {
		n := 0
		for a.Allow(c) {
			n++
		}
		return n
	}
	if got := count(Background); got != 70 {
		t.Errorf("background admitted %d of 100 with 30 %% reserved, want 70", got)
	}
	if got := count(Interactive); got != 30 {
		t.Errorf("interactive admitted %d after background, want the 30 left", got)
	}
}

func TestLearnShared(t *testing.T) {
	cs, _ := replicas(t, 2, Config{})
	cfg := AllowanceConfig{Name: "org", Limit: 1000, Lease: 1}
	a, b := mustAllowance(t, cs[0], cfg), mustAllowance(t, cs[1], cfg)
	// No reset: a remaining count and a reset would pace the two (see
	// TestPacingShared).
	h := hdr("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "2")
	if err := a.Learn(h, time.Time{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for b.Allow(Interactive) {
		n++
	}
	if n != 2 {
		t.Errorf("the other process admitted %d after the provider said 2 remain, want 2", n)
	}
	if got := b.Limit(); got != 60 {
		t.Errorf("the other process's Limit() = %d, want the learned 60", got)
	}
	if err := a.Learn(hdr("x-ratelimit-limit-requests", "many"), time.Time{}); err == nil {
		t.Errorf("Learn accepted a malformed limit")
	}
}

func TestKeysHaveTTL(t *testing.T) {
	r, _ := newRedis(t, testsvc.Redis(t))
	prefix := testPrefix(t)
	// A generous Timeout, as replicas gives: a call that a busy machine
	// holds past the default 50 ms falls back to the local share and
	// writes no key, and this test is about the keys' TTLs.
	c := must(New(Config{Redis: r, Prefix: prefix, Replicas: 2, Timeout: 2 * time.Second}))(t)
	defer c.Close()
	a := mustAllowance(t, c, AllowanceConfig{Name: "org", Limit: 100, Reserved: 0.2})
	a.Allow(Interactive)
	a.Allow(Background)
	if err := a.Learn(hdr("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "10"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	tb := mustBudget(t, c, BudgetConfig{Name: "dep", TokenBucket: &budget.TokenBucketConfig{}, Refresh: time.Nanosecond})
	tb.RecordAt(time.Time{}, failure)
	tb.RetryAt(time.Time{}, 0)
	ra := mustBudget(t, c, BudgetConfig{Name: "dep2", Ratio: &ratioNoReserve, Refresh: time.Nanosecond})
	ra.AdmitAt(time.Time{})
	ra.RetryAt(time.Time{}, 0)
	sh := mustBudget(t, c, BudgetConfig{Name: "dep3"})
	sh.RetryAt(time.Time{}, 0)

	keys, err := r.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 6 {
		t.Errorf("found keys %v, want at least the two buckets, the limit and the three budgets (fallbacks: %+v)", keys, c.Stats())
	}
	for _, k := range keys {
		if ttl := r.PTTL(context.Background(), k).Val(); ttl <= 0 {
			t.Errorf("key %s has TTL %v, want a positive one", k, ttl)
		}
	}
}

// What a response says is left caps the shared bucket: a limit of 60 a
// minute whose reset is 30 s away has 30 left; a response without a
// remaining count or a reset leaves the bucket full.
func TestLearnMovesBucket(t *testing.T) {
	tests := []struct {
		name string
		h    func(now time.Time) []string
		want int
	}{
		{"limit only", func(time.Time) []string { return []string{"x-ratelimit-limit-requests", "60"} }, 60},
		{"reset 30s", func(time.Time) []string {
			return []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-reset-requests", "30s"}
		}, 30},
		{"remaining 10", func(time.Time) []string {
			return []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "10"}
		}, 10},
		// RFC 3339 in whole seconds: a reset 46 s past the current
		// second is 45 to 46 s away, so 14 to 15 are left. The header
		// is written at the instant Learn is told, not when the table
		// is built: on a busy machine the subtests before it take
		// seconds.
		{"anthropic reset in 45-46s", func(now time.Time) []string {
			return []string{"anthropic-ratelimit-requests-limit", "60",
				"anthropic-ratelimit-requests-reset", now.Truncate(time.Second).Add(46 * time.Second).UTC().Format(time.RFC3339)}
		}, 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := replicasOne(t)
			a := mustAllowance(t, c, AllowanceConfig{Name: "org", Limit: 1000, Lease: 1})
			now := time.Now()
			h := tt.h(now)
			if err := a.Learn(hdr(h...), now); err != nil {
				t.Fatal(err)
			}
			n := 0
			for a.Allow(Interactive) {
				n++
			}
			if n < tt.want || n > tt.want+1 { // +1: a unit may refill while counting
				t.Errorf("admitted %d after learning %v, want %d", n, h, tt.want)
			}
		})
	}
}
