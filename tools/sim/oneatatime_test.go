package sim

import (
	"slices"
	"testing"
)

// publishedRun holds the figures the one-at-a-time scenario reproduces: four
// callers through a stdio transport that serialised them, counted at the
// gateway over a 700 ms outage.
var publishedRun = map[string]struct{ attempts, peak int64 }{
	"immediate 20ms":       {64, 18},
	"exp+full jitter 60ms": {25, 13},
}

// oatMedian returns the median of xs (the lower middle of an even count).
func oatMedian(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// oatWithin reports whether got is within frac of want.
func oatWithin(got, want int64, frac float64) bool {
	d := float64(got - want)
	return d <= frac*float64(want) && -d <= frac*float64(want)
}

// oneAtATime runs the one-at-a-time scenario, or it with its transport
// removed, over seeds 1 to n, and returns each policy's attempts and
// peaks by seed; it fails the test if a caller did not get through.
func oneAtATime(t *testing.T, n int, serial bool) (attempts, peaks map[string][]int64) {
	t.Helper()
	attempts, peaks = map[string][]int64{}, map[string][]int64{}
	for seed := range uint64(n) {
		s := builtin(t, "one-at-a-time")
		if !serial {
			s.Clients[0].Serial = nil
		}
		for _, r := range run(t, s, seed+1).Runs {
			if r.Succeeded != 4 {
				t.Fatalf("seed %d, %s: %d of 4 callers got through", seed+1, r.Policy, r.Succeeded)
			}
			attempts[r.Policy] = append(attempts[r.Policy], r.Attempts)
			peaks[r.Policy] = append(peaks[r.Policy], r.Peak)
		}
	}
	return attempts, peaks
}

// TestOneAtATimeReproducesThePublishedRun pins the scenario's reading: the
// medians over 11 seeds of the attempts and the peak per 200 ms counted at
// the gateway are within 10 % of the published 64/18 (retrying
// immediately) and 25/13 (full jitter) — 62/17 and 24/12 — and the
// hurried retry's figures are the transport's, one attempt per 12 ms
// whatever the seed. Without the transport the same callers retrying
// immediately arrive together, four every 20 ms, and the peak more than
// doubles: the pipe, not the policy, held it at 17.
func TestOneAtATimeReproducesThePublishedRun(t *testing.T) {
	t.Parallel()
	const seeds = 11
	attempts, peaks := oneAtATime(t, seeds, true)
	for policy, want := range publishedRun {
		a, p := oatMedian(attempts[policy]), oatMedian(peaks[policy])
		t.Logf("%-22s attempts %v (median %d, published %d), peak %v (median %d, published %d)",
			policy, attempts[policy], a, want.attempts, peaks[policy], p, want.peak)
		if !oatWithin(a, want.attempts, 0.1) || !oatWithin(p, want.peak, 0.1) {
			t.Errorf("%s: median attempts %d, peak %d over %d seeds; want within 10%% of the published %d, %d",
				policy, a, p, seeds, want.attempts, want.peak)
		}
	}
	// What the scenario's header says.
	const hurried, jitter = "immediate 20ms", "exp+full jitter 60ms"
	if a, p := attempts[hurried], peaks[hurried]; slices.Min(a) < 60 || slices.Max(a) > 64 || slices.Min(p) != 17 || slices.Max(p) != 17 {
		t.Errorf("%s: attempts %v, peaks %v; want 60–64 and 17 every time (one per 12 ms)", hurried, a, p)
	}
	if a, p := oatMedian(attempts[jitter]), oatMedian(peaks[jitter]); a < 23 || a > 25 || p < 12 || p > 13 {
		t.Errorf("%s: median attempts %d, peak %d; want about 24, 12 or 13", jitter, a, p)
	}

	_, free := oneAtATime(t, 3, false)
	t.Logf("%s without the transport: peaks %v", hurried, free[hurried])
	if p := oatMedian(free[hurried]); p < 2*17 {
		t.Errorf("%s without the transport: median peak %d, want more than twice the serialised 17", hurried, p)
	}
}
