//go:build !race

package demo_test

const raceEnabled = false
