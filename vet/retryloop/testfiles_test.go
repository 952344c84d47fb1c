package retryloop_test

import (
	"testing"

	"github.com/recoil-go/recoil/vet/retryloop"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestTestFiles: a _test.go file is left alone by default (the shared run
// sees no diagnostic in package testfiles) and checked with -testfiles (a
// run of that small package alone).
func TestTestFiles(t *testing.T) {
	res, _ := run(t)
	for _, r := range res {
		if r.Pass != nil && r.Pass.Pkg.Path() == "testfiles" && len(r.Diagnostics) > 0 {
			t.Errorf("-testfiles=false: %d diagnostics in testfiles, want 0", len(r.Diagnostics))
		}
	}
	if err := retryloop.Analyzer.Flags.Set("testfiles", "true"); err != nil {
		t.Fatal(err)
	}
	defer retryloop.Analyzer.Flags.Set("testfiles", "false")
	n := 0
	for _, r := range analysistest.Run(&recorder{}, analysistest.TestData(), retryloop.Analyzer, "testfiles") {
		n += len(r.Diagnostics)
	}
	if n != 1 {
		t.Errorf("-testfiles=true: %d diagnostics, want 1", n)
	}
}
