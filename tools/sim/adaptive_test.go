package sim

import (
	"fmt"
	"testing"
	"time"
)

// recovery returns how long after from the calls delivered by service
// (the callers' goodput, Sample.Delivered) over the last 10 s first reach
// frac of their rate over [w0, w1) and stay above three quarters of it for
// the minute that follows (a 10 s count of Poisson arrivals at 10 a second
// wanders by a tenth), to the second; false if they never do.
func recovery(s ServiceResult, w0, w1, from time.Duration, frac float64) (time.Duration, bool) {
	sum := func(a, b time.Duration) (n int64) {
		for _, p := range s.Series {
			if p.T > a && p.T <= b {
				n += p.Delivered
			}
		}
		return n
	}
	const span = 10 * time.Second
	want := frac * float64(sum(w0, w1)) * span.Seconds() / (w1 - w0).Seconds()
	end := s.Series[len(s.Series)-1].T
	above := func(t time.Duration, share float64) bool { return float64(sum(t-span, t)) >= share*want }
	for t := from; t+time.Minute <= end; t += time.Second {
		if !above(t, 1) {
			continue
		}
		held := true
		for u := t; u <= t+time.Minute && held; u += time.Second {
			held = above(u, 0.75/frac)
		}
		if held {
			return t - from, true
		}
	}
	return 0, false
}

// TestSlowProviderAdaptive: the slow-provider scenario's three limiters —
// none, a fixed cap of 40, the adaptive limiter — under the same policy of
// three 10 s attempts and no budget. The adaptive limiter sends no 429s of
// its own making, leaves a tenth of the fixed cap's work abandoned, and
// has the callers' goodput back to 90 % of its rate before the slowdown
// within a minute of the provider recovering. The figures are
// docs/adaptive.md's table.
func TestSlowProviderAdaptive(t *testing.T) {
	t.Parallel()
	r := runShipped(t, "slow-provider", 1)
	const none, fixed, adaptive = "10s timeout, 3 attempts", "10s timeout, 3 attempts, cap 40", "10s timeout, 3 attempts, adaptive"
	type row struct {
		attempts, throttled, abandoned int64
		goodput                        float64
		recovered                      time.Duration
		ok                             bool
	}
	rows := map[string]row{}
	for _, run := range r.Runs {
		p := serviceOf(t, run, "provider")
		// Before the slowdown (after the warmup): 1m to 2m. The provider
		// recovers at 7m.
		rec, ok := recovery(p, time.Minute, 2*time.Minute, 7*time.Minute, 0.9)
		rows[run.Policy] = row{p.Arrivals, p.Throttled, p.Abandoned, run.Goodput, rec, ok}
		t.Logf("| %-34s | %6d | %5d | %5d | %5.2f | %v (%v) |", run.Policy, p.Arrivals, p.Throttled, p.Abandoned, run.Goodput, rec, ok)
	}
	n, f, a := rows[none], rows[fixed], rows[adaptive]
	if a.throttled != 0 || n.throttled == 0 {
		t.Errorf("429s: %d adaptive, %d with no cap; want none, and some", a.throttled, n.throttled)
	}
	if a.abandoned*5 > f.abandoned {
		t.Errorf("abandoned: %d adaptive, %d under the fixed cap; want at most a fifth", a.abandoned, f.abandoned)
	}
	if !a.ok || a.recovered > time.Minute {
		t.Errorf("the adaptive limiter's goodput recovered %v after the provider (%v); want within a minute", a.recovered, a.ok)
	}
	// docs/adaptive.md's figures.
	for _, tt := range []struct {
		policy string
		want   string
	}{
		{none, "12329 3164 5000 6.28 1m3s"},
		{"10s timeout, recoil default", "6592 0 3044 5.35 9s"},
		{"30s timeout, recoil default", "6566 0 3 9.91 0s"},
		{fixed, "4719 0 1200 5.30 11s"},
		{adaptive, "3522 0 129 5.11 25s"},
	} {
		w := rows[tt.policy]
		if got := fmt.Sprintf("%d %d %d %.2f %v", w.attempts, w.throttled, w.abandoned, w.goodput, w.recovered); got != tt.want {
			t.Errorf("%s: attempts, 429s, abandoned, goodput, recovery %s; docs/adaptive.md says %s", tt.policy, got, tt.want)
		}
	}
}
