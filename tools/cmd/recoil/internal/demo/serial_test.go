package demo_test

import (
	"slices"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/load"
)

// The published four-caller run, on loopback: the gateway serialises the
// attempts as the published run's stdio transport did (Config.Serial, one
// at a time, 12 ms each), is down for 700 ms from its first attempt, and
// counts in 200 ms windows; four callers each get one request through
// with recoilhttp.Transport (package load), under the published policies
// exactly. Neither policy gives up, and both retry the 503 on their own
// schedule.
var publishedPolicies = []struct {
	name, spec     string
	attempts, peak int64 // published
}{
	{"immediate 20ms", "max_attempts: 1000\nbackoff: {kind: constant, base: 20ms}\noverload_backoff: {kind: constant, base: 20ms}\nbudget: none\nclassify: retry-everything\n", 64, 18},
	{"exp+full jitter 60ms", "max_attempts: 1000\nbackoff: {kind: full-jitter, base: 60ms}\noverload_backoff: {kind: full-jitter, base: 60ms}\nbudget: none\nclassify: retry-everything\n", 25, 13},
}

// TestPublishedRunOnLoopback pins the reproduction on real sockets: over
// 5 runs per policy the median attempts and peak per 200 ms the gateway
// counted are within 10 % of the published 64/18 (retrying immediately)
// and 25/13 (full jitter), every caller is accepted, and every attempt the
// callers sent was counted. Skipped under -race, which slows the machine
// several times: it would measure the race detector, not the lane.
func TestPublishedRunOnLoopback(t *testing.T) {
	if raceEnabled {
		t.Skip("times a real 12 ms lane on loopback; the race detector would be what is measured")
	}
	if testing.Short() {
		t.Skip("ten load runs on loopback")
	}
	const runs = 5
	for _, p := range publishedPolicies {
		var attempts, peaks []int64
		for seed := range uint64(runs) {
			pol, err := load.ParsePolicy(p.name, []byte(p.spec))
			if err != nil {
				t.Fatal(err)
			}
			g, err := gateway.New(gateway.Config{
				Serial:  12 * time.Millisecond,
				Outages: []gateway.Outage{{Duration: 700 * time.Millisecond}},
			})
			if err != nil {
				t.Fatal(err)
			}
			url, stop, err := g.Start()
			if err != nil {
				t.Fatal(err)
			}
			res, err := load.Run(t.Context(), load.Config{
				URL: url + "/v1/messages", Callers: 4, UntilAccepted: true,
				Policy: pol, Seed: seed + 1, Duration: 20 * time.Second,
			})
			if serr := stop(); serr != nil {
				t.Errorf("Serve: %v", serr)
			}
			if err != nil {
				t.Fatal(err)
			}
			s := g.Stats()
			if res.OK != 4 || s.Accepted != 4 || s.Attempts != res.Attempts {
				t.Fatalf("%s, run %d: %d callers through, %d accepted, %d attempts counted of %d sent; want 4, 4, all",
					p.name, seed+1, res.OK, s.Accepted, s.Attempts, res.Attempts)
			}
			attempts, peaks = append(attempts, s.Attempts), append(peaks, s.Peak)
		}
		a, pk := serialMedian(attempts), serialMedian(peaks)
		t.Logf("%-22s attempts %v (median %d, published %d), peak %v (median %d, published %d)", p.name, attempts, a, p.attempts, peaks, pk, p.peak)
		if !serialNear(a, p.attempts) || !serialNear(pk, p.peak) {
			t.Errorf("%s: median attempts %d, peak %d over %d runs; want within 10%% of the published %d, %d", p.name, a, pk, runs, p.attempts, p.peak)
		}
	}
}

// serialMedian returns the median of xs (the lower middle of an even count).
func serialMedian(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// serialNear reports whether got is within 10 % of want.
func serialNear(got, want int64) bool { return 10*max(got-want, want-got) <= want }
