package window

import (
	"math"
	"sync"
	"testing"
)

func TestAddAndSum(t *testing.T) {
	tests := []struct {
		name   string
		adds   []int64 // slices, one event each on counter 0
		newest int64
		want   int64
	}{
		{"one slice", []int64{3, 3, 3}, 3, 3},
		{"whole window", []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 9, 10},
		{"oldest slice expired", []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 9},
		{"slot reused by a later slice", []int64{2, 12}, 12, 1},
		{"earlier slice refused after reuse", []int64{12, 2}, 12, 1},
		{"negative slices", []int64{-3, -1, 0}, 0, 3},
		{"at the end of the range", []int64{math.MaxInt64, math.MaxInt64 - 9}, math.MaxInt64, 2},
		{"at the start of the range", []int64{math.MinInt64, math.MinInt64 + 1}, math.MinInt64 + 1, 2},
	}
	for _, tt := range tests {
		var r Ring
		for _, k := range tt.adds {
			r.Add(k, 0, 1)
		}
		if got, b := r.Sum(tt.newest); got != tt.want || b != 0 {
			t.Errorf("%s: Sum(%d) = %d, %d, want %d, 0", tt.name, tt.newest, got, b, tt.want)
		}
	}
}

func TestAddResults(t *testing.T) {
	var r Ring
	if got := r.Add(12, 1, 1); got != Added {
		t.Errorf("Add(12) = %v, want Added", got)
	}
	if got := r.Add(2, 1, 1); got != Later {
		t.Errorf("Add(2) after Add(12) = %v, want Later", got)
	}
	if got := r.Add(2, 0, 1); got != Added {
		t.Errorf("Add(2) on the other counter = %v, want Added", got)
	}
	if got := r.Add(12, 1, MaxCount-1); got != Added {
		t.Errorf("Add(12, MaxCount-1) = %v, want Added", got)
	}
	if got := r.Add(12, 1, 1); got != Full {
		t.Errorf("Add(12) at MaxCount = %v, want Full", got)
	}
	if _, b := r.Sum(12); b != MaxCount {
		t.Errorf("Sum(12) = %d, want MaxCount", b)
	}
	if got := r.Add(22, 1, 1); got != Added {
		t.Errorf("Add(22) over a full expired slice = %v, want Added", got)
	}
}

func TestUndoAndReset(t *testing.T) {
	var r Ring
	r.Add(5, 0, 3)
	r.Undo(5, 0, 1)
	r.Undo(15, 0, 1) // another slice: nothing
	r.Undo(5, 0, 9)  // more than counted: nothing
	if a, _ := r.Sum(5); a != 2 {
		t.Errorf("after undo: Sum(5) = %d, want 2", a)
	}
	r.Reset()
	if a, b := r.Sum(5); a != 0 || b != 0 {
		t.Errorf("after Reset: Sum(5) = %d, %d, want 0, 0", a, b)
	}
}

func TestSliceOf(t *testing.T) {
	tests := []struct{ d, width, want int64 }{
		{0, 10, 0}, {9, 10, 0}, {10, 10, 1}, {-1, 10, -1}, {-10, 10, -1}, {-11, 10, -2},
		{math.MinInt64, 1, math.MinInt64}, {math.MaxInt64, 1, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := SliceOf(tt.d, tt.width); got != tt.want {
			t.Errorf("SliceOf(%d, %d) = %d, want %d", tt.d, tt.width, got, tt.want)
		}
	}
}

// TestConcurrentAdd counts from many goroutines into slices that move on
// under them: what Sum sees of the last slices is exactly what was added
// there, and nothing is counted twice.
func TestConcurrentAdd(t *testing.T) {
	var r Ring
	const goroutines, per = 8, 2000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range per {
				k := int64(i / 100) // 20 slices, 100 events each per goroutine
				for r.Add(k, i%2, 1) == Later {
					k++ // the slot moved on: count in the next slice
				}
			}
		})
	}
	wg.Wait()
	a, b := r.Sum(per/100 - 1)
	if a+b > goroutines*per || a+b < goroutines*per/2 {
		t.Errorf("Sum = %d + %d, want between %d and %d", a, b, goroutines*per/2, goroutines*per)
	}
}
