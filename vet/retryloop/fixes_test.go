package retryloop_test

import (
	"testing"

	"github.com/recoil-go/recoil/vet/retryloop"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestSuggestedFixes applies every fix in testdata/src/fixes and compares
// the result with fixes.go.golden: time.Sleep with a context in scope
// becomes a select (returning zero values and ctx.Err()), a stacked SDK
// client gets WithMaxRetries(0), a stacked gRPC channel WithDisableRetry.
func TestSuggestedFixes(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), retryloop.Analyzer, "fixes")
}
