package sim

import (
	"context"
	"os"
	"sync"
	"testing"
)

// long reports whether the long, thorough versions of the simulator's
// sweeps should run: set RECOIL_LONG=1 (RECOIL_LONG=1 go test -race ./sim).
// By default each runs a cheaper version — a shorter virtual run, fewer
// events — chosen so that the property it asserts holds there with margin;
// the long version runs the scenario as shipped, or the full length, and
// asserts the same. `go test -short` keeps the cheap versions too.
func long() bool { return os.Getenv("RECOIL_LONG") == "1" && !testing.Short() }

// shipped caches the runs of shipped scenarios, so that tests asserting
// different things about the same run (its figures in a golden file, its
// shape, its seeds) simulate it once. A cached result must not be changed.
var shipped sync.Map // "name seed" → func() (*Result, error)

// runShipped runs the shipped scenario name with seed, once per test binary.
func runShipped(t *testing.T, name string, seed uint64) *Result {
	t.Helper()
	s := builtin(t, name)
	key := name + " " + itoa(int(seed))
	f, _ := shipped.LoadOrStore(key, sync.OnceValues(func() (*Result, error) {
		return Run(context.Background(), s, Options{Seed: seed}) // not the first caller's context: the run outlives it
	}))
	r, err := f.(func() (*Result, error))()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
