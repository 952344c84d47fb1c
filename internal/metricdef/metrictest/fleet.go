package metrictest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/recoil-go/recoil/internal/metricdef"
)

// FakeFleet is a fleet client's counts, moved by a test.
type FakeFleet struct {
	unreachable, refused atomic.Uint64
}

// Fallbacks returns the counts, as fleet.Client's method does.
func (f *FakeFleet) Fallbacks() (unreachable, refused uint64) {
	return f.unreachable.Load(), f.refused.Load()
}

// Add adds to the counts.
func (f *FakeFleet) Add(unreachable, refused uint64) {
	f.unreachable.Add(unreachable)
	f.refused.Add(refused)
}

// FleetAdder is an adapter's Metrics.Fleet.
type FleetAdder func(name string, c metricdef.FleetCounter) error

// FleetSetup returns fresh Metrics' Fleet method, and a function that
// collects them as Run's collect does.
type FleetSetup func(t *testing.T) (add FleetAdder, collect func(t *testing.T) map[string]float64)

// counts is a fleet client's unreachable and refused counts.
type counts [2]uint64

// fleetStep moves the fake clients' counts, then collects.
type fleetStep struct {
	move map[string]counts // added to each client's counts
	want map[string]counts // each client's counts the collection must show
}

// FleetKey names the fallback series of the fleet client name for cause.
func FleetKey(name, cause string) string {
	return Key(metricdef.FleetFallbacksProm, map[string]string{"fleet": name, "cause": cause})
}

// wantFleets is every fallback series the clients in want must show,
// zeros included.
func wantFleets(want map[string]counts) map[string]float64 {
	m := map[string]float64{}
	for name, c := range want {
		m[FleetKey(name, metricdef.CauseUnreachable)] = float64(c[0])
		m[FleetKey(name, metricdef.CauseRefused)] = float64(c[1])
	}
	return m
}

// checkExact compares got with want, zero series included: Metrics that
// only export fleet clients have no other series.
func checkExact(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || g != want[k] {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s = %v, want no such series", k, got[k])
		}
	}
}

// RunFleet holds an adapter's Metrics.Fleet to what both must do: export
// each fleet client's counts as they are at each collection, under the
// same names and labels, from the first collection at zero; refuse a name
// that is not a short name, a name already given, and a nil client; and
// take clients while it is collected.
func RunFleet(t *testing.T, setup FleetSetup) {
	runFleetSteps(t, setup)
	t.Run("names", func(t *testing.T) { runFleetNames(t, setup) })
	t.Run("added while collected", func(t *testing.T) { runFleetAdded(t, setup) })
}

// runFleetSteps moves fake fleets' counts between collections and checks
// each collection.
func runFleetSteps(t *testing.T, setup FleetSetup) {
	tests := []struct {
		name   string
		fleets []string
		steps  []fleetStep
	}{{
		name:   "counts move between collections",
		fleets: []string{"main"},
		steps: []fleetStep{
			{want: map[string]counts{"main": {0, 0}}},
			{move: map[string]counts{"main": {2, 0}}, want: map[string]counts{"main": {2, 0}}},
			{move: map[string]counts{"main": {1, 3}}, want: map[string]counts{"main": {3, 3}}},
			{want: map[string]counts{"main": {3, 3}}},
		},
	}, {
		name:   "two clients, each its own series",
		fleets: []string{"main", "cache-eu.1"},
		steps: []fleetStep{
			{move: map[string]counts{"main": {0, 5}}, want: map[string]counts{"main": {0, 5}, "cache-eu.1": {0, 0}}},
			{move: map[string]counts{"cache-eu.1": {7, 1}}, want: map[string]counts{"main": {0, 5}, "cache-eu.1": {7, 1}}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			add, collect := setup(t)
			fakes := map[string]*FakeFleet{}
			for _, name := range tt.fleets {
				fakes[name] = &FakeFleet{}
				if err := add(name, fakes[name]); err != nil {
					t.Fatalf("Fleet(%q) = %v", name, err)
				}
			}
			for i, s := range tt.steps {
				for name, c := range s.move {
					fakes[name].Add(c[0], c[1])
				}
				t.Logf("collection %d", i+1)
				checkExact(t, collect(t), wantFleets(s.want))
			}
		})
	}
}

// runFleetNames checks which fleet names are taken and that a refusal
// names the fleet.
func runFleetNames(t *testing.T, setup FleetSetup) {
	add, collect := setup(t)
	names := []struct {
		name string
		c    metricdef.FleetCounter
		ok   bool
	}{
		{"main", &FakeFleet{}, true},
		{"model-api.v1_eu", &FakeFleet{}, true},
		{strings.Repeat("a", 64), &FakeFleet{}, true},
		{"main", &FakeFleet{}, false}, // already given
		{"", &FakeFleet{}, false},
		{strings.Repeat("a", 65), &FakeFleet{}, false},
		{"redis://10.0.0.7:6379/0", &FakeFleet{}, false},
		{"naïve", &FakeFleet{}, false},
		{"nil", nil, false},
	}
	want := map[string]counts{}
	for _, n := range names {
		err := add(n.name, n.c)
		if (err == nil) != n.ok {
			t.Errorf("Fleet(%q) error = %v, want ok %v", n.name, err, n.ok)
		}
		if err == nil {
			want[n.name] = counts{}
		} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", n.name)) {
			t.Errorf("Fleet(%q) error %q does not name the fleet", n.name, err)
		}
	}
	checkExact(t, collect(t), wantFleets(want))
}

// runFleetAdded adds fleets while another goroutine collects.
func runFleetAdded(t *testing.T, setup FleetSetup) {
	add, collect := setup(t)
	const n = 8
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			f := &FakeFleet{}
			f.Add(uint64(i), 1)
			if err := add(fmt.Sprintf("f%d", i), f); err != nil {
				t.Errorf("Fleet(f%d) = %v", i, err)
			}
		}
	})
	for range n {
		collect(t)
	}
	wg.Wait()
	want := map[string]counts{}
	for i := range n {
		want[fmt.Sprintf("f%d", i)] = counts{uint64(i), 1}
	}
	checkExact(t, collect(t), wantFleets(want))
}
