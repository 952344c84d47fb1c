package retryloop_test

import (
	"fmt"

	"github.com/recoil-go/recoil/vet/retryloop"
)

// The analyzer is an ordinary *analysis.Analyzer: hand it to
// singlechecker.Main, multichecker.Main or unitchecker.Main beside others.
// These are the check names a //recoil:ignore comment takes.
func Example() {
	fmt.Println(retryloop.Analyzer.Name)
	for _, c := range retryloop.Checks {
		fmt.Println(c)
	}
	// Output:
	// recoilvet
	// unclassified
	// nojitter
	// deafwait
	// unbounded
	// retryafter
	// stacked
}
