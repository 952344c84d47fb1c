package limit

import "testing"

// TestSlotsAcrossGoroutines takes every slot from goroutines of their own
// (so on stripes of their own) and gives them back from another: the
// count stays exact, a slot too many is refused, and a Release too many
// panics.
func TestSlotsAcrossGoroutines(t *testing.T) {
	for _, capacity := range []int{1, 3, 8, 20} {
		l := Must(New(Config{Capacity: capacity}))
		for i := range capacity {
			ok := make(chan bool)
			go func() { ok <- l.TryAcquire() }()
			if !<-ok {
				t.Fatalf("capacity %d: TryAcquire #%d on a goroutine of its own = false", capacity, i+1)
			}
		}
		if l.TryAcquire() {
			t.Errorf("capacity %d: TryAcquire with every slot held = true", capacity)
		}
		ok := make(chan bool)
		go func() { ok <- l.TryAcquire() }()
		if <-ok {
			t.Errorf("capacity %d: TryAcquire on another goroutine with every slot held = true", capacity)
		}
		for range capacity {
			l.Release()
		}
		if got := mustPanic(l.Release); !got {
			t.Errorf("capacity %d: Release with no slot held panicked = %v, want true", capacity, got)
		}
		if got, want := l.Stats(), (Stats{Acquired: uint64(capacity)}); got != want {
			t.Errorf("capacity %d: Stats() = %+v, want %+v", capacity, got, want)
		}
	}
}
