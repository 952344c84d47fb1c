package sim

import (
	"testing"
	"time"
)

// TestVT: vt builds the very value epoch.Add would (same wall clock,
// location and no monotonic reading), on both sides of epoch.
func TestVT(t *testing.T) {
	for _, ns := range []int64{0, 1, 999_999_999, 1e9, 1e9 + 1, -1, -1e9 - 7, 123_456_789_012_345, 1 << 62} {
		if got, want := vt(ns), epoch.Add(time.Duration(ns)); got != want {
			t.Errorf("vt(%d) = %#v, want %#v", ns, got, want)
		}
	}
}
