package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/budget"
)

// costLog is a CostBudget that logs what it is asked, refusing once
// refuse calls have been made.
type costLog struct {
	mu     sync.Mutex
	calls  []string
	refuse int // refuse from this call on; 0 never refuses
}

func (b *costLog) log(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, s)
	return b.refuse == 0 || len(b.calls) < b.refuse
}

func (b *costLog) AdmitAt(time.Time) bool { return b.log("admit") }
func (b *costLog) RetryAt(_ time.Time, c budget.Cause) bool {
	return b.log(fmt.Sprintf("retry(%d)", c))
}
func (b *costLog) RecordAt(time.Time, budget.Outcome) {}
func (b *costLog) AdmitNAt(_ time.Time, n int64) bool { return b.log(fmt.Sprintf("admit %d", n)) }
func (b *costLog) RetryNAt(_ time.Time, c budget.Cause, n int64) bool {
	return b.log(fmt.Sprintf("retry(%d) %d", c, n))
}
func (b *costLog) SettleAt(_ time.Time, charged, actual int64) {
	b.log(fmt.Sprintf("settle %d %d", charged, actual))
}

var (
	_ recoil.CostBudget = (*costLog)(nil)
	_ recoil.CostBudget = (*budget.Rate)(nil)
)

// plainLog is a Budget that is not a CostBudget.
type plainLog struct{ costLog }

func (b *plainLog) AdmitNAt() {} // a different signature: not a CostBudget

func TestCost(t *testing.T) {
	errFlaky := errors.New("flaky")
	tests := []struct {
		name   string
		cost   int64 // 0: no WithCost
		plain  bool
		hedge  bool
		refuse int
		want   []string
		err    bool
	}{
		{name: "no cost: one unit", want: []string{"admit", "retry(0)"}},
		{name: "cost charged at admission and retry", cost: 700, want: []string{"admit 700", "retry(0) 700"}},
		{name: "zero cost is no cost", cost: -1, want: []string{"admit", "retry(0)"}},
		{name: "not a CostBudget", cost: 700, plain: true, want: []string{"admit", "retry(0)"}},
		{name: "refused retry", cost: 700, refuse: 2, want: []string{"admit 700", "retry(0) 700"}, err: true},
		{name: "refused admission", cost: 700, refuse: 1, want: []string{"admit 700"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b recoil.Budget
			var log *costLog
			if tt.plain {
				pl := &plainLog{}
				b, log = pl, &pl.costLog
			} else {
				log = &costLog{}
				b = log
			}
			log.refuse = tt.refuse
			p := &recoil.Policy{Budget: b, Backoff: backoff.None{}}
			ctx := context.Background()
			if tt.cost != 0 {
				ctx = recoil.WithCost(ctx, tt.cost)
			}
			n := 0
			err := recoil.Do(ctx, p, func(context.Context) error {
				if n++; n == 1 {
					return errFlaky
				}
				return nil
			})
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if fmt.Sprint(log.calls) != fmt.Sprint(tt.want) {
				t.Errorf("budget asked %q, want %q", log.calls, tt.want)
			}
		})
	}
}

// TestCostHedge: a hedge is charged the call's cost, as a retry after a
// timeout is.
func TestCostHedge(t *testing.T) { synctest.Test(t, testCostHedge) }

func testCostHedge(t *testing.T) {
	log := &costLog{}
	p := &recoil.Policy{Budget: log, Hedge: &recoil.Hedge{Delay: time.Millisecond}}
	ctx := recoil.WithCost(context.Background(), 50)
	release := make(chan struct{})
	var once sync.Once
	n := 0
	var mu sync.Mutex
	err := recoil.Do(ctx, p, func(ctx context.Context) error {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			select { // the first attempt answers only after the hedge went
			case <-release:
			case <-ctx.Done():
			}
			return ctx.Err()
		}
		once.Do(func() { close(release) })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"admit 50", fmt.Sprintf("retry(%d) 50", budget.CauseTimeout)}
	if fmt.Sprint(log.calls) != fmt.Sprint(want) {
		t.Errorf("budget asked %q, want %q", log.calls, want)
	}
}

func TestCostFrom(t *testing.T) {
	if _, ok := recoil.CostFrom(context.Background()); ok {
		t.Error("a bare context carries a cost")
	}
	if _, ok := recoil.CostFrom(recoil.WithCost(context.Background(), 0)); ok {
		t.Error("WithCost(0) gave a cost")
	}
	if n, ok := recoil.CostFrom(recoil.WithCost(context.Background(), 1234)); !ok || n != 1234 {
		t.Errorf("CostFrom = %d, %v; want 1234, true", n, ok)
	}
}

// An attempt that costs more than one unit: a model request whose prompt
// and answer are about 1,200 tokens, charged to a budget that counts tokens.
// (A daily quota, so that what refills between the call and the print,
// under 1 token in 2 s, never shows in the output.)
func ExampleWithCost() {
	tokens := budget.Must(budget.NewRate(budget.RateConfig{Limit: 30_000, Window: 24 * time.Hour})) // tokens a day
	p := &recoil.Policy{Budget: tokens}
	ctx := recoil.WithCost(context.Background(), 1200)
	err := recoil.Do(ctx, p, func(context.Context) error { return nil })
	fmt.Println(err, tokens.State().Available)
	// Output: <nil> 28800
}

// BenchmarkDoCost measures a call under a CostBudget, with and without a
// cost in its context, beside the same budget's plain path.
func BenchmarkDoCost(b *testing.B) {
	op := func(context.Context) error { return nil }
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{
		{"no-cost", context.Background()},
		{"cost", recoil.WithCost(context.Background(), 1500)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := &recoil.Policy{Budget: budget.Must(budget.NewRate(budget.RateConfig{Limit: 1 << 53, Window: time.Nanosecond}))}
			b.ReportAllocs()
			for b.Loop() {
				if err := recoil.Do(bc.ctx, p, op); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCostTargets: a call's cost is charged to its targets' allowances
// and to its request's budget, as to the policy's: the first attempt to a
// target is admitted by its cost, every further attempt is a retry of that
// cost, and the request's budget pays each retry's cost.
func TestCostTargets(t *testing.T) {
	a, b, policy, request := &costLog{}, &costLog{}, &costLog{}, &costLog{}
	p := &recoil.Policy{Budget: policy, Backoff: backoff.None{}, MaxAttempts: 4, Fallback: &recoil.Fallback{
		Targets: []recoil.Target{{Name: "a", Allowance: a}, {Name: "b", Allowance: b}}}}
	ctx := recoil.WithCost(context.Background(), 700)
	// a is retired (a 404 moves on); b fails once with a 500, then answers.
	script := []error{statusErr(404, "model_not_found"), statusErr(500, ""), nil}
	n := 0
	_, err := recoil.Drive(ctx, p, targetOps{op: func(context.Context, *recoil.Target) error {
		n++
		return script[n-1]
	}, request: request})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		log  *costLog
		want []string
	}{
		{"a", a, []string{"admit 700"}},
		{"b", b, []string{"admit 700", "retry(0) 700"}},
		{"the policy's budget", policy, []string{"admit 700", "retry(0) 700", "retry(0) 700"}},
		{"the request's budget", request, []string{"retry(0) 700", "retry(0) 700"}},
	} {
		if fmt.Sprint(tt.log.calls) != fmt.Sprint(tt.want) {
			t.Errorf("%s asked %q, want %q", tt.name, tt.log.calls, tt.want)
		}
	}
}

// targetOps drives op to each attempt's target, with a request budget.
type targetOps struct {
	op      func(context.Context, *recoil.Target) error
	request recoil.Budget
}

func (d targetOps) Attempt(ctx context.Context, n int, dl time.Time) (struct{}, error) {
	return d.AttemptTo(ctx, n, nil, dl)
}

func (d targetOps) AttemptTo(ctx context.Context, _ int, t *recoil.Target, _ time.Time) (struct{}, error) {
	return struct{}{}, d.op(ctx, t)
}

func (targetOps) Verdict(p *recoil.Policy, _ struct{}, err error) (recoil.Verdict, error) {
	if err == nil {
		return recoil.Verdict{}, nil
	}
	return p.Verdict(err, recoil.Verdict{}), err
}

func (targetOps) Discard(struct{}) {}

func (d targetOps) RequestBudget() recoil.Budget { return d.request }
