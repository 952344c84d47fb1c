package hist

import (
	"testing"
	"time"
)

func TestHistQuantiles(t *testing.T) {
	var h Hist
	for v := int64(1); v <= 100_000; v++ {
		h.Add(time.Duration(v * 1000)) // 1µs … 100ms
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		got, want := float64(h.Quantile(q)), q*100_000*1000
		if got < want*0.99 || got > want*1.01 {
			t.Errorf("quantile(%v) = %v, want %v ± 1%%", q, got, want)
		}
	}
	if got, want := h.Quantile(1), int64(100_000*1000); int64(got) != want {
		t.Errorf("quantile(1) = %v, want the maximum %v", got, want)
	}
	if got, want := h.Mean(), 50_000_500*1.0; float64(got) != want {
		t.Errorf("mean = %v, want %v", float64(got), want)
	}
}

func TestMerge(t *testing.T) {
	var a, b, all Hist
	for v := time.Duration(1); v <= 1000; v++ {
		all.Add(v * time.Microsecond)
		if v%2 == 0 {
			a.Add(v * time.Microsecond)
		} else {
			b.Add(v * time.Microsecond)
		}
	}
	a.Merge(&b)
	if a != all {
		t.Errorf("merged halves differ from the whole: count %d, mean %v, max %v; want %d, %v, %v",
			a.Count(), a.Mean(), a.Max(), all.Count(), all.Mean(), all.Max())
	}
}

func TestEmpty(t *testing.T) {
	var h Hist
	if h.Count() != 0 || h.Mean() != 0 || h.Max() != 0 || h.Quantile(0.5) != 0 {
		t.Errorf("empty Hist: count %d, mean %v, max %v, p50 %v; want zeros", h.Count(), h.Mean(), h.Max(), h.Quantile(0.5))
	}
}
