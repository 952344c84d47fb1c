//go:build !race

package recoilhttp_test

// raceEnabled reports a -race build.
const raceEnabled = false
