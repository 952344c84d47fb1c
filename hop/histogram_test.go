package hop

import (
	"slices"
	"sync"
	"testing"
)

func TestHistogram(t *testing.T) {
	var h Histogram
	if got := h.Snapshot(); len(got) != HistogramAttempts+1 || slices.ContainsFunc(got, func(n uint64) bool { return n != 0 }) {
		t.Errorf("zero Histogram Snapshot() = %v, want %d zeros", got, HistogramAttempts+1)
	}
	for _, a := range []int{-1, 0, 1, 1, 2, 3, 3, 3, HistogramAttempts, HistogramAttempts + 1, 1 << 40} {
		h.Observe(a)
	}
	want := make([]uint64, HistogramAttempts+1)
	want[0] = 4 // -1, 0, 1, 1
	want[1] = 1
	want[2] = 3
	want[HistogramAttempts-1] = 1
	want[HistogramAttempts] = 2
	if got := h.Snapshot(); !slices.Equal(got, want) {
		t.Errorf("Snapshot() = %v, want %v", got, want)
	}
	if got := h.Total(); got != 11 {
		t.Errorf("Total() = %d, want 11", got)
	}
	if got := h.Retries(); got != 7 {
		t.Errorf("Retries() = %d, want 7", got)
	}
}

func TestHistogramConcurrent(t *testing.T) {
	const goroutines, each = 8, 1000
	var h Histogram
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				h.Observe((g+i)%15 + 1) // attempts 1..15
				if i%100 == 0 {
					_ = h.Snapshot()
				}
			}
		})
	}
	wg.Wait()

	want := make([]uint64, HistogramAttempts+1)
	for g := range goroutines {
		for i := range each {
			want[min((g+i)%15+1, HistogramAttempts+1)-1]++
		}
	}
	if got := h.Snapshot(); !slices.Equal(got, want) {
		t.Errorf("Snapshot() = %v, want %v", got, want)
	}
	if got := h.Total(); got != goroutines*each {
		t.Errorf("Total() = %d, want %d", got, goroutines*each)
	}
	if got, want := h.Retries(), goroutines*each-want[0]; got != want {
		t.Errorf("Retries() = %d, want %d", got, want)
	}
}

func TestHistogramObserveAllocs(t *testing.T) {
	var h Histogram
	if got := testing.AllocsPerRun(100, func() { h.Observe(2) }); got != 0 {
		t.Errorf("Observe: %v allocs, want 0", got)
	}
}
