// Package fuzzgen decodes the choices of a property test from bytes, so that
// one check runs two ways: as a fuzz target, on the fuzzer's input, and as a
// normal test, on inputs drawn from a PCG with a fixed seed (the same cases
// on every run). It replaces a property-testing library so the core module
// requires nothing.
//
// An exhausted input reads as zeros, so every input decodes to a valid
// case, and a number drawn from a range is its low or high end one time in
// eight, as the boundaries are where the bugs are.
package fuzzgen

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// Gen hands out choices decoded from its input. Its zero value is an
// exhausted input. It is not safe for concurrent use.
type Gen struct {
	b []byte
}

// New returns a Gen that decodes data.
func New(data []byte) *Gen { return &Gen{b: data} }

// More reports whether input is left; a sequence of operations ends with it.
func (g *Gen) More() bool { return len(g.b) > 0 }

// Byte draws one byte.
func (g *Gen) Byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

// Uint64 draws eight bytes, little-endian.
func (g *Gen) Uint64() uint64 {
	var buf [8]byte
	n := copy(buf[:], g.b)
	g.b = g.b[n:]
	return binary.LittleEndian.Uint64(buf[:])
}

// Choose draws one of 0..n-1, uniformly for a uniform input.
func (g *Gen) Choose(n int) int { return int(g.Byte()) % n }

// Bool draws a boolean.
func (g *Gen) Bool() bool { return g.Byte()&1 == 1 }

// Int64Range draws from [lo, hi]. It panics if hi < lo.
func (g *Gen) Int64Range(lo, hi int64) int64 {
	if hi < lo {
		panic(fmt.Sprintf("fuzzgen: Int64Range(%d, %d)", lo, hi))
	}
	switch c := g.Byte(); {
	case c < 16:
		return lo
	case c < 32:
		return hi
	}
	span := uint64(hi) - uint64(lo)
	var v uint64
	for range (bits.Len64(span) + 7) / 8 {
		v = v<<8 | uint64(g.Byte())
	}
	if span != math.MaxUint64 {
		v %= span + 1
	}
	return int64(uint64(lo) + v)
}

// IntRange draws from [lo, hi]. It panics if hi < lo.
func (g *Gen) IntRange(lo, hi int) int { return int(g.Int64Range(int64(lo), int64(hi))) }

// Float64Range draws from [lo, hi].
func (g *Gen) Float64Range(lo, hi float64) float64 {
	return lo + (hi-lo)*float64(g.Int64Range(0, 1<<53))/(1<<53)
}

// Pick draws one of xs.
func Pick[T any](g *Gen, xs ...T) T { return xs[g.Choose(len(xs))] }

// ForRandomInputs runs check on n inputs of up to size bytes drawn from a
// PCG with a fixed seed: the same cases on every run. A failure logs the
// input, to be kept as a seed of the fuzz target, and ends the run.
func ForRandomInputs(t *testing.T, n, size int, check func(t testing.TB, g *Gen)) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	for i := range n {
		data := make([]byte, r.IntN(size+1))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		check(t, New(data))
		if t.Failed() {
			t.Logf("case %d failed on input %q", i, data)
			return
		}
	}
}

// AddSeeds gives a fuzz target the empty input, inputs of a single repeated
// byte, and n inputs of up to size bytes from a seeded PCG.
func AddSeeds(f *testing.F, n, size int) {
	f.Add([]byte{})
	for _, c := range []byte{0x00, 0x01, 0x10, 0x20, 0x7f, 0xff} {
		data := make([]byte, size)
		for j := range data {
			data[j] = c
		}
		f.Add(data)
	}
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)^0x5eed))
	for range n {
		data := make([]byte, r.IntN(size+1))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		f.Add(data)
	}
}
