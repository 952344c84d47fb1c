package hop

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/recoil-go/recoil/internal/fuzzgen"
)

func TestNewAccount(t *testing.T) {
	tests := []struct{ budget, want int }{
		{-5, 0}, {0, 0}, {1, 1}, {2, 2}, {MaxBudget, MaxBudget}, {MaxBudget + 1, MaxBudget}, {1 << 40, MaxBudget},
	}
	for _, tt := range tests {
		a := NewAccount(tt.budget)
		if got := a.Remaining(); got != tt.want {
			t.Errorf("NewAccount(%d).Remaining() = %d, want %d", tt.budget, got, tt.want)
		}
		if got := a.Spent(); got != 0 {
			t.Errorf("NewAccount(%d).Spent() = %d, want 0", tt.budget, got)
		}
	}
}

func TestAccountZeroValue(t *testing.T) {
	var a Account
	if a.Remaining() != 0 || a.Spent() != 0 || a.TrySpend() {
		t.Errorf("zero Account: Remaining %d, Spent %d, TrySpend allowed; want 0, 0, refused", a.Remaining(), a.Spent())
	}
	a.Below(3)
	if got, want := [2]int{a.Remaining(), a.Spent()}, [2]int{0, 3}; got != want {
		t.Errorf("zero Account after Below(3): remaining, spent = %v, want %v", got, want)
	}
}

func TestAccountTrySpend(t *testing.T) {
	a := NewAccount(2)
	for i, want := range []bool{true, true, false, false} {
		if got := a.TrySpend(); got != want {
			t.Errorf("TrySpend #%d = %v, want %v", i+1, got, want)
		}
	}
	if a.Remaining() != 0 || a.Spent() != 2 {
		t.Errorf("after spending 2 of 2: remaining %d, spent %d, want 0, 2", a.Remaining(), a.Spent())
	}
}

func TestAccountBelow(t *testing.T) {
	tests := []struct {
		name                     string
		budget, tries            int // TrySpend calls before Below
		below                    int
		wantRemaining, wantSpent int
	}{
		{"nothing below", 3, 0, 0, 3, 0},
		{"negative ignored", 3, 0, -2, 3, 0},
		{"some", 3, 0, 2, 1, 2},
		{"all", 3, 0, 3, 0, 3},
		{"more than remaining: stops at 0, reports all", 2, 0, 5, 0, 5},
		{"after own retries", 3, 1, 1, 1, 2},
		{"after own retries, more than remaining", 3, 2, 4, 0, 6},
		{"nothing remaining", 0, 0, 2, 0, 2},
		{"above MaxBudget counts as MaxBudget", MaxBudget, 0, 1 << 40, 0, MaxBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccount(tt.budget)
			for range tt.tries {
				a.TrySpend()
			}
			a.Below(tt.below)
			if got := a.Remaining(); got != tt.wantRemaining {
				t.Errorf("Remaining() = %d, want %d", got, tt.wantRemaining)
			}
			if got := a.Spent(); got != tt.wantSpent {
				t.Errorf("Spent() = %d, want %d", got, tt.wantSpent)
			}
		})
	}
}

// TestAccountConcurrent spends a budget from many goroutines at once: exactly
// the budget is granted, never more.
func TestAccountConcurrent(t *testing.T) {
	const budget, goroutines, tries = 500, 16, 100
	a := NewAccount(budget)
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range tries {
				if a.TrySpend() {
					granted.Add(1)
				}
				if r := a.Remaining(); r < 0 {
					t.Errorf("Remaining() = %d, want >= 0", r)
				}
			}
		})
	}
	wg.Wait()
	if got := granted.Load(); got != budget {
		t.Errorf("granted %d retries of a budget of %d from %d tries, want %d", got, budget, goroutines*tries, budget)
	}
	if a.Remaining() != 0 || a.Spent() != budget {
		t.Errorf("remaining %d, spent %d, want 0, %d", a.Remaining(), a.Spent(), budget)
	}
}

// TestAccountProperty: whatever mix of TrySpend and Below many goroutines
// run, the account never goes below zero, never grants more retries than the
// budget, grants every retry it can when nothing comes from below, and
// reports every retry made at and below.
func TestAccountProperty(t *testing.T) { fuzzgen.ForRandomInputs(t, 300, 300, checkAccountProperty) }

func FuzzAccountProperty(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 300)
	f.Fuzz(func(t *testing.T, data []byte) { checkAccountProperty(t, fuzzgen.New(data)) })
}

func checkAccountProperty(t testing.TB, g *fuzzgen.Gen) {
	budget := g.IntRange(-2, 60)
	work := make([][]int, g.IntRange(1, 8))
	for i := range work {
		work[i] = make([]int, g.IntRange(0, 30))
		for j := range work[i] {
			work[i][j] = g.IntRange(-1, 8)
		}
	}
	// Each goroutine's list: -1 is a TrySpend, n >= 0 is Below(n).

	a := NewAccount(budget)
	var granted, below, tries atomic.Int64
	var negative atomic.Bool
	var wg sync.WaitGroup
	for _, ops := range work {
		wg.Go(func() {
			for _, op := range ops {
				if op < 0 {
					tries.Add(1)
					if a.TrySpend() {
						granted.Add(1)
					}
				} else {
					a.Below(op)
					below.Add(int64(op))
				}
				if a.Remaining() < 0 {
					negative.Store(true)
				}
			}
		})
	}
	wg.Wait()

	b := int64(clamp(budget, MaxBudget))
	if negative.Load() || a.Remaining() < 0 {
		t.Fatalf("Remaining went below 0 (now %d)", a.Remaining())
	}
	if g := granted.Load(); g > b {
		t.Fatalf("granted %d retries, want at most the budget %d", g, b)
	}
	if got, want := int64(a.Spent()), granted.Load()+below.Load(); got != want {
		t.Fatalf("Spent() = %d, want %d granted + %d below = %d", got, granted.Load(), below.Load(), want)
	}
	if below.Load() == 0 {
		if got, want := granted.Load(), min(b, tries.Load()); got != want {
			t.Fatalf("granted %d of %d tries with budget %d, want %d", got, tries.Load(), b, want)
		}
		if got, want := int64(a.Remaining()), b-granted.Load(); got != want {
			t.Fatalf("Remaining() = %d, want %d", got, want)
		}
	}
	if a.Remaining() > 0 && granted.Load() != tries.Load() {
		t.Fatalf("refused %d tries while %d remain", tries.Load()-granted.Load(), a.Remaining())
	}
}

func TestAccountAllocs(t *testing.T) {
	a := NewAccount(MaxBudget)
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"TrySpend", func() { a.TrySpend() }},
		{"Below", func() { a.Below(1) }},
		{"Remaining", func() { _ = a.Remaining() }},
		{"Spent", func() { _ = a.Spent() }},
	} {
		if got := testing.AllocsPerRun(100, tt.f); got != 0 {
			t.Errorf("%s: %v allocs, want 0", tt.name, got)
		}
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if got := AccountFrom(ctx); got != nil {
		t.Errorf("AccountFrom(empty) = %p, want nil", got)
	}
	if got := AttemptFrom(ctx); got != 0 {
		t.Errorf("AttemptFrom(empty) = %d, want 0", got)
	}
	a := NewAccount(2)
	ctx = WithAttempt(WithAccount(ctx, a), 3)
	if got := AccountFrom(ctx); got != a {
		t.Errorf("AccountFrom = %p, want %p", got, a)
	}
	if got := AttemptFrom(ctx); got != 3 {
		t.Errorf("AttemptFrom = %d, want 3", got)
	}
	inner := WithAttempt(ctx, 1)
	if got := AttemptFrom(inner); got != 1 {
		t.Errorf("AttemptFrom(inner) = %d, want 1", got)
	}
	if got := AccountFrom(inner); got != a {
		t.Errorf("AccountFrom(inner) = %p, want the outer %p", got, a)
	}
}

func TestEdgeBudget(t *testing.T) {
	tests := []struct{ configured, retries, want int }{
		{0, 2, 2},  // the policy's own retries
		{0, 0, 0},  // a policy that does not retry
		{5, 2, 5},  // configured wins
		{-1, 2, 0}, // negative means zero
		{0, -1, 0},
	}
	for _, tt := range tests {
		if got := EdgeBudget(tt.configured, tt.retries); got != tt.want {
			t.Errorf("EdgeBudget(%d, %d) = %d, want %d", tt.configured, tt.retries, got, tt.want)
		}
	}
}
