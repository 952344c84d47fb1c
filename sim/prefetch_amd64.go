package sim

import "unsafe"

// prefetch asks the CPU to start loading the 512 bytes (a call) at p into the cache,
// without waiting for them (PREFETCHT0).
//
//go:noescape
func prefetch(p unsafe.Pointer)
