package leakcheck_test

import (
	"fmt"
	"testing"

	"github.com/recoil-go/recoil/internal/leakcheck"
)

// A package checks every goroutine its tests start from its TestMain.
func ExampleVerifyTestMain() {
	// In a package's main_test.go:
	//
	//	func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
	var _ func(*testing.M) = func(m *testing.M) { leakcheck.VerifyTestMain(m) }
}

// One test checks only the goroutines it started itself.
func ExampleVerifyNone() {
	test := func(t *testing.T) {
		ignore := leakcheck.IgnoreCurrent()
		t.Cleanup(func() { leakcheck.VerifyNone(t, ignore) })

		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { defer close(done); <-stop }()
		// ... the test ...
		close(stop)
		<-done
	}
	_ = test
}

// Find reports what was started and is left running, with each goroutine's
// stack.
func ExampleFind() {
	ignore := leakcheck.IgnoreCurrent() // what ran before, the example's runner too
	release := make(chan struct{})
	go func() { <-release }()

	err := leakcheck.Find(ignore, leakcheck.MaxWait(0))
	fmt.Println("while it runs:", err != nil)

	close(release)
	fmt.Println("once it returned:", leakcheck.Find(ignore))
	// Output:
	// while it runs: true
	// once it returned: <nil>
}
