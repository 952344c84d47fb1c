package budget

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/recoil-go/recoil/internal/fuzzgen"
)

func TestQuotaDefaults(t *testing.T) {
	for name, q := range map[string]*Quota{
		"zero value":  new(Quota),
		"zero config": Must(NewQuota(QuotaConfig{})),
		"explicit":    Must(NewQuota(QuotaConfig{Capacity: 500, RetryCost: 5, TimeoutCost: 10, NoRetryIncrement: 1})),
	} {
		if got, want := q.State(), (QuotaState{Available: 500, Capacity: 500}); got != want {
			t.Errorf("%s: State() = %+v, want %+v", name, got, want)
		}
		if got, want := drain(q, CauseError), 100; got != want {
			t.Errorf("%s: retries granted from full = %d, want %d (500/5)", name, got, want)
		}
	}
}

// drain retries until refused and returns how many retries were granted.
func drain(q *Quota, c Cause) int {
	n := 0
	for q.RetryAt(time.Time{}, c) {
		n++
	}
	return n
}

// TestQuotaCosts pins the standard mode's costs: 5 a retry, 10 a retry after
// a timeout, out of 500, refused when the balance is below the cost.
func TestQuotaCosts(t *testing.T) {
	tests := []struct {
		name     string
		cfg      QuotaConfig
		before   int   // ordinary retries spent first
		cause    Cause // kind of the retries then drained
		granted  int
		leftover int
	}{
		{"ordinary from full", QuotaConfig{}, 0, CauseError, 100, 0},
		{"timeouts from full", QuotaConfig{}, 0, CauseTimeout, 50, 0},
		{"throttles from full", QuotaConfig{}, 0, CauseThrottle, 100, 0},
		{"timeout with 10 left", QuotaConfig{}, 98, CauseTimeout, 1, 0},
		{"timeout with 5 left", QuotaConfig{}, 99, CauseTimeout, 0, 5},
		{"ordinary with 5 left", QuotaConfig{}, 99, CauseError, 1, 0},
		{"2026 ordinary", Quota2026(), 0, CauseError, 35, 10}, // 35·14 = 490
		{"2026 timeouts", Quota2026(), 0, CauseTimeout, 35, 10},
		{"2026 throttling", Quota2026(), 0, CauseThrottle, 100, 0}, // 100·5 = 500
		{"odd capacity", QuotaConfig{Capacity: 12}, 0, CauseError, 2, 2},
		{"zero capacity", QuotaConfig{Capacity: -1}, 0, CauseError, 0, 0},
		{"free timeouts", QuotaConfig{TimeoutCost: -1}, 0, CauseTimeout, -1, 500},
	}
	for _, tt := range tests {
		q := Must(NewQuota(tt.cfg))
		for range tt.before {
			if !q.RetryAt(t0, CauseError) {
				t.Fatalf("%s: setup retry refused", tt.name)
			}
		}
		if tt.granted < 0 { // free: check a large number go through
			for i := range 10000 {
				if !q.RetryAt(t0, tt.cause) {
					t.Fatalf("%s: free retry %d refused", tt.name, i)
				}
			}
		} else if got := drain(q, tt.cause); got != tt.granted {
			t.Errorf("%s: retries granted = %d, want %d", tt.name, got, tt.granted)
		}
		if got := q.State().Available; got != tt.leftover {
			t.Errorf("%s: available after refusal = %d, want %d", tt.name, got, tt.leftover)
		}
	}
}

// TestQuotaRefunds pins what successes give back: a retry's cost when the
// retry succeeds, NoRetryIncrement when a first attempt does, never above
// capacity; failures give and take nothing.
func TestQuotaRefunds(t *testing.T) {
	tests := []struct {
		name      string
		retries   []Cause // RetryAt causes, all granted
		record    []Outcome
		available int
	}{
		{"retry refunded", []Cause{CauseError}, []Outcome{{Attempt: 2, Result: Success}}, 500},
		{"timeout refunded", []Cause{CauseTimeout}, []Outcome{{Attempt: 2, Result: Success, After: CauseTimeout}}, 500},
		{"timeout refunded as ordinary", []Cause{CauseTimeout}, []Outcome{{Attempt: 2, Result: Success}}, 495},
		{"ordinary refunded as timeout", []Cause{CauseError, CauseError}, []Outcome{{Attempt: 3, Result: Success, After: CauseTimeout}}, 500},
		{"failed retry not refunded", []Cause{CauseError}, []Outcome{{Attempt: 2, Result: Failure}}, 495},
		{"first success +1", []Cause{CauseError, CauseError}, []Outcome{success, success, success}, 493},
		{"attempt 0 is a first attempt", []Cause{CauseError}, []Outcome{{Result: Success}}, 496},
		{"capped at capacity", []Cause{CauseError}, []Outcome{success, success, success, success, success, success, success}, 500},
		{"refund capped", nil, []Outcome{{Attempt: 2, Result: Success, After: CauseTimeout}}, 500},
		{"others change nothing", []Cause{CauseTimeout}, []Outcome{failure, overload, permanent, ignored,
			{Attempt: 2, Result: Overload}, {Attempt: 2, Result: Permanent}, {Attempt: 2, Result: Ignored}}, 490},
	}
	for _, tt := range tests {
		var q Quota
		for _, c := range tt.retries {
			if !q.Retry(c) {
				t.Fatalf("%s: Retry(%v) refused", tt.name, c)
			}
		}
		for _, o := range tt.record {
			q.Record(o)
		}
		if got := q.State().Available; got != tt.available {
			t.Errorf("%s: available = %d, want %d", tt.name, got, tt.available)
		}
	}
}

func TestQuotaNeverRefusesFirstAttempts(t *testing.T) {
	var q Quota
	drain(&q, CauseError)
	if !q.Admit() || !q.AdmitAt(t0) {
		t.Error("Admit on an exhausted quota = false, want true")
	}
}

// quotaModel is a reference model of the standard mode's quota.
type quotaModel struct{ avail, capacity, cost, timeoutCost, throttleCost, inc int }

func (m *quotaModel) price(c Cause) int {
	switch c {
	case CauseTimeout:
		return m.timeoutCost
	case CauseThrottle:
		return m.throttleCost
	}
	return m.cost
}

func (m *quotaModel) retry(cause Cause) bool {
	c := m.price(cause)
	if m.avail < c {
		return false
	}
	m.avail -= c
	return true
}

func (m *quotaModel) record(o Outcome) {
	if o.Result != Success {
		return
	}
	r := m.inc
	if o.Attempt > 1 {
		r = m.price(o.After)
	}
	m.avail = min(m.avail+r, m.capacity)
}

func TestQuotaProperty(t *testing.T) { fuzzgen.ForRandomInputs(t, 300, 8000, checkQuotaProperty) }

func FuzzQuotaProperty(f *testing.F) {
	fuzzgen.AddSeeds(f, 32, 8000)
	f.Fuzz(func(t *testing.T, data []byte) { checkQuotaProperty(t, fuzzgen.New(data)) })
}

func checkQuotaProperty(t testing.TB, g *fuzzgen.Gen) {
	c := QuotaConfig{
		Capacity:         g.IntRange(1, 1000),
		RetryCost:        g.IntRange(1, 50),
		TimeoutCost:      g.IntRange(1, 50),
		ThrottleCost:     g.IntRange(1, 50),
		NoRetryIncrement: g.IntRange(1, 5),
	}
	q := Must(NewQuota(c))
	causes := []Cause{CauseError, CauseTimeout, CauseThrottle}
	m := quotaModel{c.Capacity, c.Capacity, c.RetryCost, c.TimeoutCost, c.ThrottleCost, c.NoRetryIncrement}
	n := g.IntRange(0, 2000)
	for i := range n {
		if g.Bool() {
			c := fuzzgen.Pick(g, causes...)
			if got, want := q.Retry(c), m.retry(c); got != want {
				t.Fatalf("step %d: Retry(%v) = %v, want %v", i, c, got, want)
			}
		} else {
			o := Outcome{
				Attempt: g.IntRange(0, 4),
				Result:  fuzzgen.Pick(g, Success, Failure, Overload, Permanent, Ignored),
				After:   fuzzgen.Pick(g, causes...),
			}
			q.Record(o)
			m.record(o)
		}
		s := q.State()
		if s.Available < 0 || s.Available > s.Capacity {
			t.Fatalf("step %d: available = %d, want in [0, %d]", i, s.Available, s.Capacity)
		}
		if s.Available != m.avail {
			t.Fatalf("step %d: available = %d, want %d (model)", i, s.Available, m.avail)
		}
	}
}

func TestQuotaConcurrent(t *testing.T) {
	var q Quota
	var granted atomic.Int64
	hammer(16, 50, func(g, i int) {
		if q.Retry(CauseError) {
			granted.Add(1)
		}
	})
	if got, want := granted.Load(), int64(100); got != want {
		t.Errorf("retries granted by 16 goroutines from a full quota = %d, want %d", got, want)
	}
	// Refund every granted retry concurrently, with first-attempt successes
	// and further retries mixed in: the balance must stay in range.
	hammer(16, 200, func(g, i int) {
		switch i % 4 {
		case 0:
			q.Record(Outcome{Attempt: 2, Result: Success})
		case 1:
			q.Record(success)
		default:
			q.Retry(Cause(i % 3))
		}
		if s := q.State(); s.Available < 0 || s.Available > s.Capacity {
			t.Errorf("available = %d, want in [0, %d]", s.Available, s.Capacity)
		}
	})
}

func BenchmarkQuota(b *testing.B) {
	b.Run("record-success-full", func(b *testing.B) {
		b.ReportAllocs()
		var q Quota
		for b.Loop() {
			q.RecordAt(time.Time{}, success)
		}
	})
	b.Run("record-success-full-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var q Quota
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q.RecordAt(time.Time{}, success)
			}
		})
	})
	// A retry charged and refunded: the quota's write path.
	b.Run("retry-refund", func(b *testing.B) {
		b.ReportAllocs()
		var q Quota
		retried := Outcome{Attempt: 2, Result: Success}
		for b.Loop() {
			q.RetryAt(time.Time{}, CauseError)
			q.RecordAt(time.Time{}, retried)
		}
	})
	b.Run("retry-refund-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var q Quota
		retried := Outcome{Attempt: 2, Result: Success}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q.RetryAt(time.Time{}, CauseError)
				q.RecordAt(time.Time{}, retried)
			}
		})
	})
	// A retry refused by an exhausted quota: every caller's path in a
	// retry storm.
	b.Run("retry-exhausted", func(b *testing.B) {
		b.ReportAllocs()
		var q Quota
		drain(&q, CauseError)
		for b.Loop() {
			q.RetryAt(time.Time{}, CauseError)
		}
	})
	b.Run("retry-exhausted-parallel", func(b *testing.B) {
		b.ReportAllocs()
		var q Quota
		drain(&q, CauseError)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q.RetryAt(time.Time{}, CauseError)
			}
		})
	})
}
