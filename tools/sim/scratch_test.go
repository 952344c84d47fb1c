package sim

import (
	"bytes"
	"context"
	"testing"
	"unsafe"
)

// TestScratchReuse: a run on memory another run left behind — larger,
// with other policies — gives the output of a run on fresh memory.
func TestScratchReuse(t *testing.T) {
	small := gatewayAt(t, 4)
	big := gatewayAt(t, 300)
	text := func(s *Scenario) []byte {
		t.Helper()
		r, err := Run(context.Background(), s, Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	want := text(small)
	for range 3 {
		text(big) // leaves its calls, jobs and buckets to the next run
		if got := text(small); !bytes.Equal(got, want) {
			t.Fatalf("a run on reused memory differs:\n%s\nwant:\n%s", got, want)
		}
	}
}

// TestCallSize: a call is the memory the run loop loads for every event
// of every caller: seven cache lines, whole ones (a slab's chunk starts on
// a page, so a call whose size is a multiple of 64 bytes starts on a
// line). What falls back or hedges is kept in the padding of the fields
// before it (mode) or apart (callCold, and the world's hedges): the plain
// call does not grow.
func TestCallSize(t *testing.T) {
	if got, want := unsafe.Sizeof(call{}), uintptr(7*64); got != want {
		t.Errorf("a call is %d bytes, want %d", got, want)
	}
	if got, want := unsafe.Sizeof(job{}), uintptr(80); got != want {
		t.Errorf("a job is %d bytes, want %d", got, want)
	}
	var s callSlab
	s.alloc()
	if a := uintptr(unsafe.Pointer(s.get(0))); a%64 != 0 {
		t.Errorf("a chunk of calls starts at %#x, not on a cache line", a)
	}
}
