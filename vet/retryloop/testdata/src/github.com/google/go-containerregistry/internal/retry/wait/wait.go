// Package wait is a stub of go-containerregistry's copy of apimachinery's
// wait.Backoff.
package wait

import "time"

// Backoff is an exponential schedule; Jitter randomises each step.
type Backoff struct {
	Duration time.Duration
	Factor   float64
	Jitter   float64
	Steps    int
	Cap      time.Duration
}
