//go:build !unix

package metrictest

import "time"

// cpuTime is unknown here: CPU time is not reported.
func cpuTime() time.Duration { return 0 }
