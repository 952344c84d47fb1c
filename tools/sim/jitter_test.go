package sim

import (
	"fmt"
	"testing"
	"time"
)

// crowdScenario is gateway-outage's setup — a gateway down for 700 ms that
// answers in about 12 ms, callers that each need one call through and all
// begin within 2 ms — with a time series in 10 ms steps and three policies
// that never give up: exponential backoff from 60 ms without jitter, the
// same ceilings with full jitter, and exponential backoff from 30 ms
// without jitter, whose waits have full jitter's mean (a uniform wait in
// [0, c] averages c/2).
func crowdScenario(t *testing.T, callers int) *Scenario {
	t.Helper()
	s, err := Parse("crowd.yaml", fmt.Appendf(nil, `name: crowd
window: 200ms
sample: 10ms
duration: 10s
policies:
  - {name: no jitter, max_attempts: 1000, backoff: {kind: exponential, base: 60ms}, budget: none}
  - {name: full jitter, max_attempts: 1000, backoff: {kind: full-jitter, base: 60ms}, budget: none}
  - {name: no jitter same mean, max_attempts: 1000, backoff: {kind: exponential, base: 30ms}, budget: none}
services:
  - name: gateway
    service: {dist: normal, mean: 12ms, stddev: 2ms}
    fail_time: {dist: normal, mean: 12ms, stddev: 2ms}
    outages: [{start: 0s, duration: 700ms}]
clients:
  - {name: callers, target: gateway, callers: %d, calls: 1, start: {dist: uniform, min: 0s, max: 2ms}}
`, callers))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// crowdFigures are one policy's medians over the seeds: attempts, the peak
// per 200 ms, and the retries' peak — the most attempts in one 10 ms step
// after the first, which holds every first attempt (they all begin within
// 2 ms) and hardly a retry (an answer takes 12 ± 2 ms, then the wait).
type crowdFigures struct{ attempts, peak, retryPeak int64 }

func crowd(t *testing.T, callers, seeds int) map[string]crowdFigures {
	t.Helper()
	var attempts, peaks, retryPeaks = map[string][]int64{}, map[string][]int64{}, map[string][]int64{}
	for seed := range uint64(seeds) {
		for _, r := range run(t, crowdScenario(t, callers), seed+1).Runs {
			if r.Succeeded != int64(callers) {
				t.Fatalf("%d callers, seed %d, %s: %d got through", callers, seed+1, r.Policy, r.Succeeded)
			}
			var rp int64
			for _, sm := range r.Services[0].Series {
				if sm.T > 10*time.Millisecond {
					rp = max(rp, sm.Arrivals)
				}
			}
			attempts[r.Policy] = append(attempts[r.Policy], r.Attempts)
			peaks[r.Policy] = append(peaks[r.Policy], r.Peak)
			retryPeaks[r.Policy] = append(retryPeaks[r.Policy], rp)
		}
	}
	out := map[string]crowdFigures{}
	for p := range attempts {
		out[p] = crowdFigures{oatMedian(attempts[p]), oatMedian(peaks[p]), oatMedian(retryPeaks[p])}
		t.Logf("%4d callers, %-19s attempts %v, peak/200ms %v, retries' peak/10ms %v", callers, p, attempts[p], peaks[p], retryPeaks[p])
	}
	return out
}

// TestJitterNeedsACrowd tests the claim "with one caller, jitter makes no
// difference; with several, jitter is everything" (medians over 9 seeds),
// and pins the form in which it holds.
//
// One caller: jitter changes neither the peak of retries (one at a time,
// there is nothing to spread apart) nor, against a schedule without
// jitter of the same mean wait, the median number of attempts. Against the
// schedule with the same ceilings it makes one attempt more (6 against
// 5): full jitter waits half as long on average. The claim holds for the
// peak, and for the total only when the schedules' means are equal.
//
// A thousand callers: without jitter every wave of retries arrives as one
// spike as sharp as the first attempts' — the retries' peak per 10 ms is
// the whole crowd — and with full jitter a fraction of it. But the peak
// per 200 ms is not lowered, it is raised: the first attempts of a crowd
// that begins together arrive together whatever the policy, and full
// jitter's shorter waits pull the early retries into the same window.
// "Jitter is everything" holds for the retries, not for the peak a 200 ms
// count sees.
func TestJitterNeedsACrowd(t *testing.T) {
	t.Parallel()
	const seeds = 9
	const none, jitter, sameMean = "no jitter", "full jitter", "no jitter same mean"

	one := crowd(t, 1, seeds)
	if j, n := one[jitter], one[sameMean]; j.retryPeak != n.retryPeak || j.retryPeak != 1 || j.attempts != n.attempts {
		t.Errorf("one caller: full jitter %+v, no jitter of the same mean %+v; want the same retries' peak (1) and median attempts", j, n)
	}
	if j, n := one[jitter], one[none]; j.attempts != n.attempts+1 || j.retryPeak != n.retryPeak {
		t.Errorf("one caller: full jitter %+v, no jitter with the same ceilings %+v; want one attempt more and the same retries' peak", j, n)
	}

	const many = 1000
	crowdOf := crowd(t, many, seeds)
	for _, n := range []string{none, sameMean} {
		j, nj := crowdOf[jitter], crowdOf[n]
		if nj.retryPeak < many*9/10 || j.retryPeak*3 > nj.retryPeak {
			t.Errorf("%d callers: retries' peak per 10 ms %d with full jitter, %d with %s; want the whole crowd without jitter and under a third of it with",
				many, j.retryPeak, nj.retryPeak, n)
		}
		if j.peak <= nj.peak {
			t.Errorf("%d callers: peak per 200 ms %d with full jitter, %d with %s; want it higher with jitter", many, j.peak, nj.peak, n)
		}
	}
}
