package hop

import (
	"net/http"
	"testing"
	"time"
)

func BenchmarkParseRequest(b *testing.B) {
	h := http.Header{}
	Request{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1}.Write(h)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ParseRequest(h)
	}
}

func BenchmarkParseRequestAbsent(b *testing.B) {
	h := http.Header{"Content-Type": {"application/json"}}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ParseRequest(h)
	}
}

func BenchmarkRequestWrite(b *testing.B) {
	r := Request{Budget: 2, HasBudget: true, Deadline: 2950 * time.Millisecond, HasDeadline: true, Attempt: 1}
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		r.Write(h)
	}
}

func BenchmarkAccountTrySpend(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		a := NewAccount(MaxBudget)
		for pb.Next() {
			if !a.TrySpend() {
				a.remaining.Store(MaxBudget)
			}
		}
	})
}

func BenchmarkAccountTrySpendShared(b *testing.B) {
	a := NewAccount(MaxBudget)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.TrySpend() // mostly refused once spent: a load only
		}
	})
}

func BenchmarkHistogramObserve(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Observe(1)
		}
	})
}
