//go:build !linux

package sim

// threadCPU is not wired up here: false.
func threadCPU() (int64, bool) { return 0, false }
