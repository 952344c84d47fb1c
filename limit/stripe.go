package limit

import (
	"sync/atomic"
	"unsafe"
)

// stripes is how many cache lines a striped counter is spread over: more
// than the cores that commonly share a limiter's hot path, a power of two.
const (
	stripeBits = 3
	stripes    = 1 << stripeBits
)

// cacheLine is the padding unit: 128 bytes, since x86 processors fetch
// cache lines in adjacent pairs and arm64 ones may have 128-byte lines.
const cacheLine = 128

// counter is a striped event counter: each goroutine adds to one of
// [stripes] words on its own cache line, chosen by its stack address, so
// goroutines on different cores rarely write the same line, and a load
// sums them. Counting is one uncontended atomic add; the sum is exact once
// the additions it should see have returned. The zero value is zero.
type counter struct {
	s [stripes]struct {
		n atomic.Uint64
		_ [cacheLine - 8]byte
	}
}

// add counts one event.
func (c *counter) add() { c.s[stripe()].n.Add(1) }

// load returns the count.
func (c *counter) load() uint64 {
	var sum uint64
	for i := range c.s {
		sum += c.s[i].n.Load()
	}
	return sum
}

// stripe picks a stripe for the calling goroutine from the address of a
// local variable: goroutine stacks are separate allocations of at least
// 2 KiB (larger for a deep stack), so the bits above the low ones tell
// goroutines apart, and a goroutine keeps its stripe while its stack does.
// The address is only hashed, never dereferenced.
func stripe() int {
	var x byte
	h := uint64(uintptr(unsafe.Pointer(&x))>>11) * 0x9e3779b97f4a7c15
	return int(h >> (64 - stripeBits))
}
