package fleet

import (
	"testing"
	"time"

	"github.com/recoil-go/recoil/budget"
)

var (
	failure        = budget.Outcome{Attempt: 1, Result: budget.Failure}
	success        = budget.Outcome{Attempt: 1, Result: budget.Success}
	ratioNoReserve = budget.RatioConfig{MinRetriesPerSec: -1, Percent: 0.5}
)

// Failures recorded in one process stop retries in another: the bucket is
// the fleet's, with gRFC A6's threshold at half.
func TestTokenBucketShared(t *testing.T) {
	cs, _ := replicas(t, 2, Config{})
	cfg := BudgetConfig{Name: "dep", TokenBucket: &budget.TokenBucketConfig{MaxTokens: 10, TokenRatio: 1}, Lease: 1, Refresh: time.Nanosecond}
	a, b := mustBudget(t, cs[0], cfg), mustBudget(t, cs[1], cfg)
	steps := []struct {
		on      *Budget
		record  budget.Outcome
		n       int
		tokens  float64
		retryOK bool
	}{
		{a, failure, 4, 6, true},
		{a, failure, 1, 5, false}, // at half: A6 refuses
		{a, success, 1, 6, true},
		{b, failure, 3, 3, false},
		{b, success, 1, 4, false},
		{a, success, 6, 10, true},
	}
	for i, s := range steps {
		for range s.n {
			s.on.RecordAt(time.Time{}, s.record)
		}
		// Ask the other process: it sees the shared bucket.
		other := a
		if s.on == a {
			other = b
		}
		if got := other.RetryAt(time.Time{}, budget.CauseError); got != s.retryOK {
			t.Errorf("step %d: RetryAt in the other process = %v, want %v", i, got, s.retryOK)
		}
		if got := other.StateAt(time.Time{}).Tokens; got != s.tokens {
			t.Errorf("step %d: the other process sees %v tokens, want %v", i, got, s.tokens)
		}
	}
}

// Deposits made in one process pay for retries in another.
func TestRatioShared(t *testing.T) {
	cs, _ := replicas(t, 2, Config{})
	cfg := BudgetConfig{Name: "dep", Ratio: &ratioNoReserve, Lease: 2, Refresh: time.Nanosecond}
	a, b := mustBudget(t, cs[0], cfg), mustBudget(t, cs[1], cfg)
	for range 10 {
		a.AdmitAt(time.Time{}) // 0.5 a retry each, written at once (Refresh 1 ns)
	}
	n := 0
	for b.RetryAt(time.Time{}, budget.CauseError) {
		n++
	}
	if n != 5 {
		t.Errorf("the other process got %d retries from 10 requests at 50 %%, want 5", n)
	}
	if a.RetryAt(time.Time{}, budget.CauseError) {
		t.Errorf("a retry was granted with the shared balance spent")
	}
}

// Unused leases go back on Close: a Ratio's retries, an allowance's units.
func TestCloseReturnsLeases(t *testing.T) {
	cs, _ := replicas(t, 2, Config{})
	cfg := BudgetConfig{Name: "dep", Ratio: &ratioNoReserve, Lease: 4, Refresh: time.Nanosecond}
	a, b := mustBudget(t, cs[0], cfg), mustBudget(t, cs[1], cfg)
	for range 8 {
		a.AdmitAt(time.Time{})
	}
	if !a.RetryAt(time.Time{}, budget.CauseError) { // takes all four, spends one
		t.Fatal("retry refused with four in the balance")
	}
	acfg := AllowanceConfig{Name: "org", Limit: 10, Window: time.Hour, Lease: 5}
	x, y := mustAllowance(t, cs[0], acfg), mustAllowance(t, cs[1], acfg)
	x.Allow(Interactive) // leases 5, spends 1
	cs[0].Close()

	n := 0
	for b.RetryAt(time.Time{}, budget.CauseError) {
		n++
	}
	if n != 3 {
		t.Errorf("after Close the other process got %d retries, want the 3 returned", n)
	}
	m := 0
	for y.Allow(Interactive) {
		m++
	}
	if m != 9 {
		t.Errorf("after Close the other process got %d units, want 9 (one was spent)", m)
	}
}

func TestBudgetLocalShare(t *testing.T) {
	c := localClient(t, 2)
	tb := mustBudget(t, c, BudgetConfig{Name: "dep", TokenBucket: &budget.TokenBucketConfig{MaxTokens: 20}})
	n := 0
	for tb.RetryAt(time.Time{}, budget.CauseError) && n < 100 {
		tb.RecordAt(time.Time{}, failure)
		n++
	}
	if n != 5 { // half of the local 10 tokens
		t.Errorf("a token bucket of 20 over 2 replicas allowed %d failures' retries locally, want 5", n)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ra := mustBudget(t, c, BudgetConfig{Name: "dep2", Ratio: &budget.RatioConfig{MinRetriesPerSec: 2, TTL: 10 * time.Second}})
	if !ra.AdmitAt(now) {
		t.Fatal("a Ratio refused a first attempt")
	}
	m := 0
	for ra.RetryAt(now, budget.CauseError) {
		m++
	}
	if m != 10 { // a reserve of 2/s over 2 replicas: 1/s for 10 s; 20 % of one request adds nothing whole
		t.Errorf("a Ratio with 2 retries/s over 2 replicas granted %d locally, want 10", m)
	}
}
