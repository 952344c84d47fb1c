package sim

import (
	"syscall"
	"unsafe"
)

// threadCPU returns the CPU time the calling thread has used, in
// nanoseconds, and true (CLOCK_THREAD_CPUTIME_ID). On a machine shared
// with other work it leaves out the time the thread waited for a CPU,
// which wall time counts.
func threadCPU() (int64, bool) {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
