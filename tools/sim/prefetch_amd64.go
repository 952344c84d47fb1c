package sim

import "unsafe"

// prefetch asks the CPU to start loading the n bytes at p (n > 0) into the
// cache, every line of them, without waiting for them (PREFETCHT0).
//
//go:noescape
func prefetch(p unsafe.Pointer, n uintptr)
