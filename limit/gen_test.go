package limit

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// gen decodes the choices of a property test from bytes: a fuzz target
// hands it the fuzzer's input, and a normal test hands it bytes from a
// seeded PCG (forRandomInputs), so both drive the same code. An exhausted
// input reads as zeros, so every input decodes to a valid case, and a
// number drawn from a range is its low or high end one time in eight, as
// the boundaries are where the bugs are.
type gen struct {
	b []byte
}

// more reports whether input is left; a sequence of operations ends with it.
func (g *gen) more() bool { return len(g.b) > 0 }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

// choose draws one of 0..n-1, uniformly for a uniform input.
func (g *gen) choose(n int) int { return int(g.byte()) % n }

func (g *gen) bool() bool { return g.byte()&1 == 1 }

// int64Range draws from [lo, hi].
func (g *gen) int64Range(lo, hi int64) int64 {
	if hi < lo {
		panic(fmt.Sprintf("int64Range(%d, %d)", lo, hi))
	}
	switch c := g.byte(); {
	case c < 16:
		return lo
	case c < 32:
		return hi
	}
	span := uint64(hi) - uint64(lo)
	var v uint64
	for range (bits.Len64(span) + 7) / 8 {
		v = v<<8 | uint64(g.byte())
	}
	if span != math.MaxUint64 {
		v %= span + 1
	}
	return int64(uint64(lo) + v)
}

func (g *gen) intRange(lo, hi int) int { return int(g.int64Range(int64(lo), int64(hi))) }

// pick draws one of xs.
func pick[T any](g *gen, xs ...T) T { return xs[g.choose(len(xs))] }

// forRandomInputs runs check on n inputs of up to size bytes drawn from a
// PCG with a fixed seed: the same cases on every run. A failure logs the
// input, to be kept as a seed of the fuzz target.
func forRandomInputs(t *testing.T, n, size int, check func(t testing.TB, g *gen)) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	for i := range n {
		data := make([]byte, r.IntN(size+1))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		ok := func() bool {
			defer func() {
				if t.Failed() {
					t.Logf("case %d failed on input %q", i, data)
				}
			}()
			check(t, &gen{b: data})
			return !t.Failed()
		}()
		if !ok {
			return
		}
	}
}

// addSeeds gives a fuzz target the empty input, inputs of a single repeated
// byte, and n inputs of up to size bytes from a seeded PCG.
func addSeeds(f *testing.F, n, size int) {
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
