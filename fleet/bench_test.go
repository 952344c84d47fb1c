package fleet

import (
	"testing"
	"time"

	"github.com/recoil-go/recoil/budget"
)

// benchAllowance measures decisions against a shared allowance that never
// runs out (a billion a second), taking lease units per round trip, and
// reports the round trips per 1,000 decisions.
func benchAllowance(b *testing.B, lease int64, parallel bool) {
	cs, cnt := replicas(b, 1, Config{})
	a := mustAllowance(b, cs[0], AllowanceConfig{Name: "org", Limit: 1e9, Window: time.Second, Lease: lease})
	a.Allow(Interactive) // handshake, script load
	b.ReportAllocs()
	before := cnt.n.Load()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !a.Allow(Interactive) {
					b.Error("refused")
				}
			}
		})
	} else {
		for b.Loop() {
			if !a.Allow(Interactive) {
				b.Fatal("refused")
			}
		}
	}
	b.ReportMetric(float64(cnt.n.Load()-before)*1000/float64(b.N), "roundtrips/1000")
	b.ReportMetric(0, "ns/op") // decisions/s below says it better
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

func BenchmarkAllowance(b *testing.B) {
	for _, bc := range []struct {
		name  string
		lease int64
	}{
		{"lease=1", 1}, // no lease: every decision a round trip
		{"lease=100", 100},
		{"lease=1000", 1000},
	} {
		b.Run(bc.name, func(b *testing.B) { benchAllowance(b, bc.lease, false) })
		b.Run(bc.name+"/parallel", func(b *testing.B) { benchAllowance(b, bc.lease, true) })
	}
}

// BenchmarkBudget measures the shared retry budgets' common paths beside
// package budget's local ones, in the same run: a success while the budget
// is full (the healthy path), a success that deposits (the batched path, on
// a budget whose balance successes cannot fill in the run), and a retry
// spent from a lease of 100.
func BenchmarkBudget(b *testing.B) {
	cs, cnt := replicas(b, 1, Config{})
	tb := mustBudget(b, cs[0], BudgetConfig{Name: "tb", TokenBucket: &budget.TokenBucketConfig{}})
	ra := mustBudget(b, cs[0], BudgetConfig{Name: "ratio", Ratio: &budget.RatioConfig{}})
	ra.AdmitAt(time.Time{})
	sh := mustBudget(b, cs[0], BudgetConfig{Name: "share"})
	// A balance of a billion retries, a thousandth of one a success: one
	// retry with a lease of all of it leaves the shared balance empty, and
	// no run of successes fills it again.
	deep := budget.ShareConfig{Reserve: 1e9, Percent: 1e-3}
	shDeposit := mustBudget(b, cs[0], BudgetConfig{Name: "share-deposit", Share: &deep, Lease: 1e9})
	shDeposit.RetryAt(time.Time{}, budget.CauseError)
	shRetry := mustBudget(b, cs[0], BudgetConfig{Name: "share-retry", Share: &deep, Lease: 100})
	var local budget.TokenBucket
	localRatio := budget.Must(budget.NewRatio(budget.RatioConfig{}))
	var localShare budget.Share
	localDeposit, localRetry := budget.Must(budget.NewShare(deep)), budget.Must(budget.NewShare(deep))
	for range 1_000_000 { // a million retries' deficit: every success deposits
		localDeposit.RetryAt(time.Time{}, budget.CauseError)
	}
	ok := budget.Outcome{Attempt: 1, Result: budget.Success}
	retry := func(r interface {
		RetryAt(time.Time, budget.Cause) bool
	}) func() {
		return func() {
			if !r.RetryAt(time.Time{}, budget.CauseError) {
				b.Fatal("retry refused")
			}
		}
	}
	for _, bc := range []struct {
		name string
		f    func()
	}{
		{"tokenbucket/success/fleet", func() { tb.RecordAt(time.Time{}, ok) }},
		{"tokenbucket/success/local", func() { local.RecordAt(time.Time{}, ok) }},
		{"ratio/admit/fleet", func() { ra.AdmitAt(time.Time{}) }},
		{"ratio/admit/local", func() { localRatio.AdmitAt(time.Time{}) }},
		{"share/success/fleet", func() { sh.RecordAt(time.Time{}, ok) }},
		{"share/success/local", func() { localShare.RecordAt(time.Time{}, ok) }},
		{"share/deposit/fleet", func() { shDeposit.RecordAt(time.Time{}, ok) }},
		{"share/deposit/local", func() { localDeposit.RecordAt(time.Time{}, ok) }},
		{"share/retry/fleet", retry(shRetry)},
		{"share/retry/local", retry(localRetry)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			before := cnt.n.Load()
			for b.Loop() {
				bc.f()
			}
			b.ReportMetric(float64(cnt.n.Load()-before)*1000/float64(b.N), "roundtrips/1000")
		})
	}
}
