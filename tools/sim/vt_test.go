package sim

import (
	"testing"
	"time"
)

// TestVT: vt builds the very value epoch.Add would (same wall clock,
// location and no monotonic reading), at any virtual time (never before
// epoch), and epochUnix is epoch's.
func TestVT(t *testing.T) {
	if got := epoch.Unix(); got != epochUnix {
		t.Errorf("epoch is %d in Unix seconds, epochUnix %d", got, epochUnix)
	}
	for _, ns := range []int64{0, 1, 999_999_999, 1e9, 1e9 + 1, 1e9 - 7, 123_456_789_012_345, 1 << 62, 1<<63 - 1} {
		if got, want := vt(ns), epoch.Add(time.Duration(ns)); got != want {
			t.Errorf("vt(%d) = %#v, want %#v", ns, got, want)
		}
	}
}
