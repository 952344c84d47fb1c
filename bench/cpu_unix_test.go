//go:build unix

package bench

import "syscall"

// cpuTime returns the process's user and system CPU time so far, in
// nanoseconds: what a benchmark costs in work, whatever else the machine
// is running (wall time on a shared machine measures the queue for a CPU).
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
