package fleet

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/recoil-go/recoil/budget"
)

// t0 dates the decisions of tests that pass the clock themselves.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Retries taken in one process spend the balance every process sees, and
// successes in one pay for retries in another, once it has learned the
// balance is below full.
func TestShareShared(t *testing.T) {
	cs, cnt := replicas(t, 2, Config{})
	cfg := BudgetConfig{Name: "dep", Share: &budget.ShareConfig{Reserve: 3, Percent: 0.5}, Lease: 1, Refresh: time.Nanosecond}
	a, b := mustBudget(t, cs[0], cfg), mustBudget(t, cs[1], cfg)
	warm(t, cs[0])
	now := t0
	steps := []struct {
		what    string
		on      *Budget
		success bool // record successes, else ask for retries
		n       int
		granted int // retries granted
		trips   int64
	}{
		{"b spends the reserve, a lease of one at a time", b, false, 4, 3, 4},
		{"a believes the balance full: its successes write nothing", a, true, 2, 0, 0},
		{"so b gets nothing from them", b, false, 1, 0, 1},
		{"a learns the balance is spent", a, false, 1, 0, 1},
		{"two successes pay a retry, written once the first is Refresh old", a, true, 2, 0, 1},
		{"b spends it", b, false, 2, 1, 2},
		{"a fills the balance, then writes nothing", a, true, 10, 0, 3},
		{"b spends the reserve again", b, false, 4, 3, 4},
	}
	for _, s := range steps {
		before := cnt.n.Load()
		granted := 0
		for range s.n {
			now = now.Add(time.Millisecond)
			if s.success {
				s.on.RecordAt(now, success)
			} else if s.on.RetryAt(now, budget.CauseError) {
				granted++
			}
		}
		if granted != s.granted {
			t.Errorf("%s: %d retries granted, want %d", s.what, granted, s.granted)
		}
		if got := cnt.n.Load() - before; got != s.trips {
			t.Errorf("%s: %d round trips, want %d", s.what, got, s.trips)
		}
	}
}

// The healthy path makes no round trip; deposits are written in batches,
// retries taken a lease at a time.
func TestShareRoundTrips(t *testing.T) {
	drained := budget.ShareConfig{Reserve: 1000, Percent: 0.001} // one success: a thousandth of a retry
	tests := []struct {
		name      string
		cfg       budget.ShareConfig
		lease     int64
		drain     bool // take one lease first, spending the balance
		successes int
		every     time.Duration // between successes
		retries   int
		trips     int64
		left      float64 // the balance this process sees after
	}{
		{"full: successes write nothing", budget.ShareConfig{}, 0, false, 1000, time.Millisecond, 0, 0, 10},
		{"drained: deposits written every 250", drained, 1000, true, 1000, 0, 0, 4, 1},
		{"drained: written once the oldest is Refresh old", drained, 1000, true, 3, 50 * time.Millisecond, 0, 1, 0.003},
		{"no percent: successes write nothing", budget.ShareConfig{Percent: -1}, 0, true, 1000, time.Millisecond, 0, 0, 9},
		{"retries: one round trip a lease", drained, 100, false, 0, 0, 250, 3, 700},
		{"default lease: 2 % of the reserve, at least one", budget.ShareConfig{}, 0, false, 0, 0, 3, 3, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, cnt := replicas(t, 1, Config{})
			b := mustBudget(t, cs[0], BudgetConfig{Name: "dep", Share: &tt.cfg, Lease: tt.lease})
			warm(t, cs[0])
			now := t0
			if tt.drain && !b.RetryAt(now, budget.CauseError) {
				t.Fatal("the first retry was refused")
			}
			before := cnt.n.Load()
			for range tt.successes {
				b.RecordAt(now, success)
				now = now.Add(tt.every)
			}
			for i := range tt.retries {
				if !b.RetryAt(now, budget.CauseError) {
					t.Fatalf("retry %d refused", i+1)
				}
			}
			if got := cnt.n.Load() - before; got != tt.trips {
				t.Errorf("%d round trips, want %d", got, tt.trips)
			}
			if got := b.StateAt(now).Retries; got != tt.left {
				t.Errorf("the process sees %v retries in the balance, want %v", got, tt.left)
			}
		})
	}
}

// A refunded retry goes back into the lease without a round trip, and
// beyond the lease into the shared balance; Close gives the lease back.
func TestShareRefundAndClose(t *testing.T) {
	cs, cnt := replicas(t, 2, Config{})
	cfg := BudgetConfig{Name: "dep", Share: &budget.ShareConfig{Reserve: 4, Percent: -1}, Lease: 2, Refresh: time.Nanosecond}
	a, b := mustBudget(t, cs[0], cfg), mustBudget(t, cs[1], cfg)
	warm(t, cs[0])
	steps := []struct {
		what   string
		do     func()
		leased int64
		trips  int64
	}{
		{"a retry takes a lease of two", func() { a.RetryAt(t0, budget.CauseError) }, 1, 1},
		{"a refund puts it back", func() { a.RefundAt(t0, budget.CauseError, 0) }, 2, 0},
		{"a refund beyond the lease waits for a write", func() { a.RefundAt(t0, budget.CauseError, 0) }, 2, 0},
		{"Close writes it and gives the lease back", func() { cs[0].Close() }, 0, 1},
	}
	for _, s := range steps {
		before := cnt.n.Load()
		s.do()
		if got := a.StateAt(t0).Leased; got != s.leased {
			t.Errorf("%s: %d leased, want %d", s.what, got, s.leased)
		}
		if got := cnt.n.Load() - before; got != s.trips {
			t.Errorf("%s: %d round trips, want %d", s.what, got, s.trips)
		}
	}
	// The reserve of 4, less the lease of 2, plus the 2 given back and the
	// one refunded beyond the lease, clamped to the reserve.
	n := 0
	for b.RetryAt(t0.Add(time.Duration(n)*time.Second), budget.CauseError) {
		n++
	}
	if n != 4 {
		t.Errorf("after Close the other process got %d retries, want 4", n)
	}
}

// Across replicas deciding at once, the fleet's retries stay within
// Reserve + Percent × successes + replicas × Lease, and below the failure
// rate Percent pays for, nearly every retry wanted goes.
func TestShareFleetBound(t *testing.T) {
	const (
		nrep    = 4
		calls   = 150 // per replica
		reserve = 10
		percent = 0.2
		lease   = 2
	)
	tests := []struct {
		failures float64
		minShare float64 // of the retries wanted that must go
	}{
		{0.1, 0.9}, // below Percent/(1+Percent): successes pay for every retry
		{0.3, 0},
		{0.6, 0},
		{1, 0}, // only the reserve goes
	}
	for _, tt := range tests {
		t.Run(fmtRate(tt.failures), func(t *testing.T) {
			cs, _ := replicas(t, nrep, Config{})
			var mu sync.Mutex
			var wanted, made, successes, held int
			var wg sync.WaitGroup
			for i, c := range cs {
				b := mustBudget(t, c, BudgetConfig{Name: "dep", Share: &budget.ShareConfig{Reserve: reserve, Percent: percent}, Lease: lease, Refresh: time.Nanosecond})
				wg.Go(func() {
					w, m, s := runCalls(b, rand.New(rand.NewPCG(uint64(i), 7)), calls, tt.failures)
					mu.Lock()
					defer mu.Unlock()
					wanted, made, successes = wanted+w, made+m, successes+s
					held += int(b.StateAt(time.Time{}).Leased)
				})
			}
			wg.Wait()
			bound := reserve + percent*float64(successes) + nrep*lease
			t.Logf("%d retries wanted, %d made, %d successes, %d leased at the end; bound %.1f", wanted, made, successes, held, bound)
			if float64(made) > bound {
				t.Errorf("%d retries made, want ≤ %.1f (Reserve + Percent × %d successes + replicas × Lease)", made, bound, successes)
			}
			if float64(made) < tt.minShare*float64(wanted) {
				t.Errorf("%d of %d retries wanted made, want at least %.0f %%", made, wanted, 100*tt.minShare)
			}
			if tt.failures == 1 && made+held != reserve {
				t.Errorf("with every attempt failing, %d retries made and %d leased, want the reserve of %d", made, held, reserve)
			}
		})
	}
}

// warm makes the connection's handshake and loads the share's script, so
// that the round trips counted after it are the budget's alone.
func warm(t *testing.T, c *Client) {
	t.Helper()
	if !mustBudget(t, c, BudgetConfig{Name: "warm"}).RetryAt(t0, budget.CauseError) {
		t.Fatal("a fresh share refused its first retry")
	}
}

// runCalls makes n calls of up to three attempts, each failing with
// probability p, asking b before each retry; it returns the retries wanted
// and made, and the successes.
func runCalls(b *Budget, rng *rand.Rand, n int, p float64) (wanted, made, successes int) {
	now := t0
	for range n {
		for attempt := 1; attempt <= 3; attempt++ {
			if attempt > 1 {
				wanted++
				if !b.RetryAt(now, budget.CauseError) {
					break
				}
				made++
			}
			now = now.Add(time.Millisecond)
			if rng.Float64() >= p {
				b.RecordAt(now, budget.Outcome{Attempt: attempt, Result: budget.Success})
				successes++
				break
			}
			b.RecordAt(now, budget.Outcome{Attempt: attempt, Result: budget.Failure})
		}
	}
	return wanted, made, successes
}

func fmtRate(p float64) string {
	return map[float64]string{0.1: "10% failures", 0.3: "30% failures", 0.6: "60% failures", 1: "all fail"}[p]
}

// Without Redis a Share decides from the local share: Reserve/Replicas,
// refilled by successes at the same Percent, refunds given back. So does a
// token bucket, which successes refill once failures have drained it.
func TestShareLocal(t *testing.T) {
	tests := []struct {
		name string
		cfg  BudgetConfig
		// first: failures, each asking for a retry until one is
		// refused; then successes, then retries until one is refused.
		first, successes, then int
	}{
		{"share: reserve over replicas", BudgetConfig{}, 5, 0, 0},
		{"share: five successes pay one", BudgetConfig{}, 5, 5, 1},
		{"share: percent 0.5", BudgetConfig{Share: &budget.ShareConfig{Reserve: 4, Percent: 0.5}}, 2, 10, 2},
		{"share: no reserve holds one retry", BudgetConfig{Share: &budget.ShareConfig{Reserve: -1}}, 1, 0, 0},
		{"token bucket: successes refill it", BudgetConfig{TokenBucket: &budget.TokenBucketConfig{MaxTokens: 20, TokenRatio: 1}}, 5, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := localClient(t, 2)
			tt.cfg.Name = "dep"
			b := mustBudget(t, c, tt.cfg)
			count := func() int {
				n := 0
				for ; n < 1000 && b.RetryAt(t0, budget.CauseError); n++ {
					b.RecordAt(t0, failure)
				}
				return n
			}
			if got := count(); got != tt.first {
				t.Errorf("%d retries at first, want %d", got, tt.first)
			}
			for range tt.successes {
				b.RecordAt(t0, success)
			}
			if got := count(); got != tt.then {
				t.Errorf("%d retries after %d successes, want %d", got, tt.successes, tt.then)
			}
			if b.StateAt(t0).Shared {
				t.Error("StateAt says Shared without Redis")
			}
		})
	}
	c := localClient(t, 2)
	b := mustBudget(t, c, BudgetConfig{Name: "dep", Share: &budget.ShareConfig{Reserve: 2}})
	if !b.RetryAt(t0, budget.CauseError) || b.RetryAt(t0, budget.CauseError) {
		t.Fatal("a local share of one retry did not grant exactly one")
	}
	b.RefundAt(t0, budget.CauseError, 0)
	if got := b.StateAt(t0).Retries; got != 1 {
		t.Errorf("the local share holds %v after a refund, want 1", got)
	}
}

// While Redis is away a Share decides from the local share, says so, and
// keeps the deposits it has not written; back on Redis, it writes them.
// The Client's down flag is set as a failed call and the probe set it
// (TestFault does it with a real server paused and killed).
func TestShareFallbackAndRejoin(t *testing.T) {
	cs, cnt := replicas(t, 2, Config{})
	cfg := BudgetConfig{Name: "dep", Share: &budget.ShareConfig{Reserve: 2, Percent: 0.5}, Lease: 1, Refresh: time.Minute}
	a, b := mustBudget(t, cs[0], cfg), mustBudget(t, cs[1], cfg)
	warm(t, cs[0])
	retries := func(on *Budget, now time.Time) (n int) {
		for ; n < 100 && on.RetryAt(now, budget.CauseError); n++ {
		}
		return n
	}
	steps := []struct {
		what    string
		at      time.Duration // after t0
		do      func(now time.Time) int
		want    int
		shared  bool
		noTrips bool
	}{
		{"b spends the reserve", 0, func(now time.Time) int { return retries(b, now) }, 2, true, false},
		{"a learns it is spent", 0, func(now time.Time) int { return retries(a, now) }, 0, true, false},
		{"a's successes pay one, not yet written", 0, func(now time.Time) int {
			a.RecordAt(now, success)
			a.RecordAt(now, success)
			return 0
		}, 0, true, true},
		{"Redis away: a decides from its share of the reserve", 0, func(now time.Time) int {
			cs[0].down.Store(true)
			return retries(a, now)
		}, 1, false, true},
		{"and its successes refill it", 0, func(now time.Time) int {
			a.RecordAt(now, success)
			a.RecordAt(now, success)
			return retries(a, now)
		}, 1, false, true},
		{"Redis back: a's next success writes what it held", 2 * time.Minute, func(now time.Time) int {
			cs[0].down.Store(false)
			a.RecordAt(now, success)
			return retries(b, now)
		}, 1, true, false},
	}
	for _, s := range steps {
		before := cnt.n.Load()
		now := t0.Add(s.at)
		if got := s.do(now); got != s.want {
			t.Errorf("%s: %d retries, want %d", s.what, got, s.want)
		}
		if got := a.StateAt(now).Shared; got != s.shared {
			t.Errorf("%s: StateAt().Shared = %v, want %v", s.what, got, s.shared)
		}
		if trips := cnt.n.Load() - before; s.noTrips && trips != 0 {
			t.Errorf("%s: %d round trips, want none", s.what, trips)
		}
	}
}
