package testsvc

import (
	"os"
	"testing"
)

// Long reports whether the long tests run: RECOIL_LONG=1 is set and -short
// is not. By default `go test` runs each package in seconds; what costs
// minutes and guards against rare regressions — the release test that
// builds consumers against a fresh module cache, the simulator's long
// sweeps, loopback runs under -race, peer comparisons — runs only under
// RECOIL_LONG=1, as .ci/run sets it. It must be called from a test binary.
func Long() bool { return os.Getenv("RECOIL_LONG") == "1" && !testing.Short() }

// SkipUnlessLong skips the test unless Long, saying what it does (what
// reads as "skipping <what>") and how to run it.
func SkipUnlessLong(t TB, what string) {
	t.Helper()
	if !Long() {
		t.Skipf("skipping %s: RECOIL_LONG=1 runs it (.ci/run does)", what)
	}
}
