package retryloop_test

import (
	"testing"

	"github.com/recoil-go/recoil/vet/retryloop"
	"golang.org/x/tools/go/analysis/analysistest"
)

// casePackages are the testdata packages whose functions are labelled
// cases (// case: flag <check>... or // case: clean).
var casePackages = []string{"loops", "sdk", "clean", "usesleeper", "stacked", "ignores", "hard", "sleeper"}

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), retryloop.Analyzer, casePackages...)
}
