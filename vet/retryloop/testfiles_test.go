package retryloop_test

import (
	"testing"

	"github.com/recoil-go/recoil/vet/retryloop"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestTestFiles: a _test.go file is left alone by default and checked
// with -testfiles.
func TestTestFiles(t *testing.T) {
	tests := []struct {
		flag string
		want int
	}{{"false", 0}, {"true", 1}}
	for _, tt := range tests {
		if err := retryloop.Analyzer.Flags.Set("testfiles", tt.flag); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range analysistest.Run(&recorder{}, analysistest.TestData(), retryloop.Analyzer, "testfiles") {
			n += len(r.Diagnostics)
		}
		if n != tt.want {
			t.Errorf("-testfiles=%s: %d diagnostics, want %d", tt.flag, n, tt.want)
		}
	}
	if err := retryloop.Analyzer.Flags.Set("testfiles", "false"); err != nil {
		t.Fatal(err)
	}
}
