package blast

import (
	"math"
	"testing"
)

// TestStackOneLayerIsLoad: one uncapped layer is the single-layer model —
// the same load below capacity and the same tipping point, both ways.
func TestStackOneLayerIsLoad(t *testing.T) {
	for _, backoff := range []bool{false, true} {
		for _, retries := range []int{0, 1, 2, 4} {
			path := [][]Layer{{{Retries: retries, Backoff: backoff}}}
			for i := 0; i <= 100; i++ {
				f := float64(i) / 100
				got, want := StackLoad(1000, 1e12, f, path), Load(1000, 1e12, f, retries, backoff)
				if math.Abs(got-want) > 1e-9*want {
					t.Fatalf("retries %d backoff %v f %v: StackLoad %v, Load %v", retries, backoff, f, got, want)
				}
			}
			got, want := StackTippingPoint(1000, 1200, path, 0), TippingPoint(1000, 1200, retries, backoff, 0)
			if got.Exists != want.Exists || got.Slider != want.Slider || math.Abs(got.Exact-want.Exact) > 1e-12 {
				t.Errorf("retries %d backoff %v: StackTippingPoint %+v, TippingPoint %+v", retries, backoff, got, want)
			}
		}
	}
}

// TestStackWhy: docs/why.md's figures through the layered model — three
// layers of three attempts send 27 when everything fails; the tipping
// point of one layer of two retries is 17.08 % (slider 17.5 %) and 36.64 %
// (37 %) with backoff.
func TestStackWhy(t *testing.T) {
	three := []Layer{{Retries: 2}, {Retries: 2}, {Retries: 2}}
	if a, f := Reaching(three, 1); a != 27 || f != 1 {
		t.Errorf("Reaching(3×3×3, 1) = %v, %v; want 27, 1", a, f)
	}
	if a, _ := Reaching(three, 0); a != 1 {
		t.Errorf("Reaching(3×3×3, 0) = %v, want 1", a)
	}
	if got := StackLoad(1000, 1e9, 1, [][]Layer{three}); got != 27000 {
		t.Errorf("StackLoad(3×3×3, f=1) = %v, want 27000", got)
	}
	for _, tt := range []struct {
		backoff       bool
		exact, slider float64
	}{{false, 0.1708, 0.175}, {true, 0.3664, 0.37}} {
		tp := StackTippingPoint(1000, 1200, [][]Layer{{{Retries: 2, Backoff: tt.backoff}}}, 0.005)
		if !tp.Exists || math.Abs(tp.Exact-tt.exact) > 5e-5 || tp.Slider != tt.slider {
			t.Errorf("backoff %v: tipping %+v, want %.4f, slider %v", tt.backoff, tp, tt.exact, tt.slider)
		}
	}
	// Two paths to the same service each bring their own load.
	if got := StackLoad(10, 1e9, 1, [][]Layer{three, {}}); got != 280 {
		t.Errorf("two paths: %v, want 270 + 10", got)
	}
}

// TestLayerBudgets: a ratio budget caps the attempts per call at 1 + ratio;
// a token bucket stops retries once the failure rate passes
// ratio/(1+ratio); the expected figures are consistent with the share of
// calls let through.
func TestLayerBudgets(t *testing.T) {
	tests := []struct {
		name          string
		l             Layer
		q             float64
		attempts, err float64
	}{
		{"uncapped", Layer{Retries: 2}, 1, 3, 1},
		{"uncapped half", Layer{Retries: 2}, 0.5, 1.75, 0.125},
		{"ratio 20% all failing", Layer{Retries: 2, RetryRatio: 0.2}, 1, 1.2, 1},
		{"ratio above need", Layer{Retries: 2, RetryRatio: 0.5}, 0.1, 1.11, 0.001},
		{"ratio 20% half failing", Layer{Retries: 2, RetryRatio: 0.2}, 0.5, 1.2, (1-0.2/0.75)*0.5 + 0.2/0.75*0.125},
		{"throttle below", Layer{Retries: 2, ThrottleRatio: 0.1}, 0.09, 1 + 0.09 + 0.0081, 0.09 * 0.09 * 0.09},
		{"throttle above", Layer{Retries: 2, ThrottleRatio: 0.1}, 0.1, 1, 0.1},
		{"throttle all failing", Layer{Retries: 4, ThrottleRatio: 0.1}, 1, 1, 1},
		{"no retries", Layer{}, 0.7, 1, 0.7},
		{"q clamped", Layer{Retries: 1}, 2, 2, 1},
	}
	for _, tt := range tests {
		a, f := tt.l.Expect(tt.q)
		if math.Abs(a-tt.attempts) > 1e-12 || math.Abs(f-tt.err) > 1e-12 {
			t.Errorf("%s: Expect(%v) = %v, %v; want %v, %v", tt.name, tt.q, a, f, tt.attempts, tt.err)
		}
	}
	if got := ThrottleAbove(0.1); math.Abs(got-1/11.0) > 1e-15 {
		t.Errorf("ThrottleAbove(0.1) = %v, want 1/11", got)
	}
	if got := ThrottleAbove(0); got != 1 {
		t.Errorf("ThrottleAbove(0) = %v, want 1", got)
	}
}

// TestStackTippingThrottled: a token bucket that drains makes the load fall
// again; the tipping point is the first crossing, and a bucket that drains
// before the load reaches capacity means there is none.
func TestStackTippingThrottled(t *testing.T) {
	// 3 attempts with a 10 % token ratio: below 9.09 % the load is at most
	// 1 + q + q² ≈ 1.099 of the offered, so a headroom of 1.2 is never
	// reached, and above it the layer makes one attempt.
	path := [][]Layer{{{Retries: 2, ThrottleRatio: 0.1}}}
	if tp := StackTippingPoint(1000, 1200, path, 0); tp.Exists {
		t.Errorf("throttled: tipping %+v, want none", tp)
	}
	// With a headroom of 5 %, it crosses at the root of q + q² = 0.05.
	tp := StackTippingPoint(1000, 1050, path, 0)
	want := (math.Sqrt(1.2) - 1) / 2
	if !tp.Exists || math.Abs(tp.Exact-want) > 1e-12 || tp.Slider != 0.05 {
		t.Errorf("throttled, 5%% headroom: %+v, want %v, slider 0.05", tp, want)
	}
	// Overloaded from the start.
	if tp := StackTippingPoint(1000, 900, path, 0); !tp.Exists || tp.Exact != 0 {
		t.Errorf("overloaded: %+v, want 0", tp)
	}
	// Shedding above capacity raises the failure rate the layers see.
	if got := StackLoad(1000, 1000, 0.5, [][]Layer{{{Retries: 2}}}); !(got > Load(1000, 1e12, 0.5, 2, false)) {
		t.Errorf("shedding: %v, want above the unshed %v", got, Load(1000, 1e12, 0.5, 2, false))
	}
}

// TestPersistent: a persistent failure sends the whole product; three
// layers of three tip at 0.2/26 of the requests, and drained budgets
// raise the tipping point.
func TestPersistent(t *testing.T) {
	three := [][]Layer{{{Retries: 2}, {Retries: 2}, {Retries: 2}}}
	if got := PersistentLoad(1000, 1, three); got != 27000 {
		t.Errorf("PersistentLoad(f=1) = %v, want 27000", got)
	}
	if got := PersistentLoad(1000, 0, three); got != 1000 {
		t.Errorf("PersistentLoad(f=0) = %v, want 1000", got)
	}
	tp := PersistentTippingPoint(1000, 1200, three, 0.005)
	if !tp.Exists || math.Abs(tp.Exact-0.2/26) > 1e-12 || tp.Slider != 0.01 {
		t.Errorf("PersistentTippingPoint = %+v, want %v, slider 0.01", tp, 0.2/26)
	}
	// A ratio budget of 20 %, a drained token bucket and a 10 % ratio:
	// 1.2 × 1 × 1.1 = 1.32 per request, tipping at 0.2/0.32 = 62.5 %.
	budgeted := [][]Layer{{{Retries: 2, RetryRatio: 0.2}, {Retries: 2, ThrottleRatio: 0.1}, {Retries: 2, RetryRatio: 0.1}}}
	if got := PersistentLoad(1, 1, budgeted); math.Abs(got-1.32) > 1e-12 {
		t.Errorf("budgeted PersistentLoad(f=1) = %v, want 1.32", got)
	}
	tp = PersistentTippingPoint(1, 1.2, budgeted, 0.005)
	if !tp.Exists || math.Abs(tp.Exact-0.625) > 1e-12 || tp.Slider != 0.625 {
		t.Errorf("budgeted PersistentTippingPoint = %+v, want 0.625", tp)
	}
	if tp := PersistentTippingPoint(1, 2, budgeted, 0.005); tp.Exists {
		t.Errorf("headroom 2 over a 1.32 worst: %+v, want none", tp)
	}
}
