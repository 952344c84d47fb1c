// Package leakcheck reports goroutines a test left running.
//
// It is the repository's own, standard-library-only stand-in for
// go.uber.org/goleak, so that no module of recoil needs a third-party
// requirement to check its tests for leaks. The semantics follow goleak:
//
//   - VerifyTestMain runs a package's tests and, if they passed, fails the
//     test binary when goroutines other than the test runner's and the
//     runtime's are still running.
//   - VerifyNone fails one test the same way; with IgnoreCurrent taken at the
//     start of the test it checks only the goroutines the test started.
//
// Goroutines often take a moment to finish after the code that stopped them
// returns (a closed listener's accept loop, a timer's callback), so a check
// looks again, with growing pauses, until none is left or a deadline passes
// (MaxWait, 5 s by default, long enough for a busy machine). Only then does
// it report each leaked goroutine with its stack.
//
// A package's tests check every goroutine they start with
//
//	func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
//
// The goroutines always ignored are the checking goroutine itself, the test
// runner's goroutines waiting on their subtests or on parallel tests, the
// fuzzing engine's, os/signal's signal loop, goroutines in a cgo system call
// and the execution tracer's reader. IgnoreTopFunction and IgnoreAnyFunction
// ignore more, by the function on top of a goroutine's stack or by any
// function in it.
package leakcheck
