//go:build race

package demo_test

// raceEnabled reports a -race build, which slows the machine several times.
const raceEnabled = true
