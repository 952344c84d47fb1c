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

// TestCallOwnLast: the run loop prefetches a call up to its own policy
// when no caller owns one (world.callBytes), so own must come last.
func TestCallOwnLast(t *testing.T) {
	if got, want := unsafe.Offsetof(call{}.own)+unsafe.Sizeof(call{}.own), unsafe.Sizeof(call{}); got != want {
		t.Errorf("own ends at %d of a %d-byte call; move it to the end", got, want)
	}
}

// TestCallSize: a call is the memory the run loop walks for every event
// of every caller, and what falls back or hedges is kept in the padding of
// the fields before it (mode, prior, leg) or beside the world (hedges):
// the plain call does not grow.
func TestCallSize(t *testing.T) {
	if got, want := unsafe.Sizeof(call{}), uintptr(672); got != want {
		t.Errorf("a call is %d bytes, want %d", got, want)
	}
	if got, want := unsafe.Sizeof(job{}), uintptr(80); got != want {
		t.Errorf("a job is %d bytes, want %d", got, want)
	}
}
