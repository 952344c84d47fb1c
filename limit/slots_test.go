package limit

import (
	"sync/atomic"
	"testing"
)

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

// TestSlotsTakeOnce checks the limiter's inlined first try against the
// states of one stripe: it takes a slot only where take would, and leaves
// to take the slot whose count of slots taken wraps, so Stats.Acquired
// stays exact across the wrap.
func TestSlotsTakeOnce(t *testing.T) {
	const nearWrap = (1<<32 - 1) << 32 // taken is 2^32-1: the next take wraps
	for _, tt := range []struct {
		name      string
		w, lease  uint64
		once      bool   // takeOnce's answer
		took      bool   // take's, once takeOnce refused
		wantHeld  uint64 // after both
		wantTaken uint64
	}{
		{"room", 0, 2, true, false, 1, 1},
		{"full", 2 | 5<<32, 2, false, false, 2, 5},
		{"sealed", sealBit, 2, false, false, 0, 0},
		{"taken wraps", nearWrap, 2, false, true, 1, 1 << 32},
	} {
		var p slots
		p.s[3].w.Store(tt.w)
		p.s[3].lease.Store(tt.lease)
		once := p.takeOnce(3)
		took := false
		if !once {
			took = p.take(3)
		}
		held, taken := p.held()
		if once != tt.once || took != tt.took || held != tt.wantHeld || taken != tt.wantTaken {
			t.Errorf("%s: takeOnce = %v, then take = %v, held, taken = %d, %d; want %v, %v, %d, %d",
				tt.name, once, took, held, taken, tt.once, tt.took, tt.wantHeld, tt.wantTaken)
		}
	}
}

// TestSlotsLeaseRacesTake grows one stripe's lease a slot at a time, the
// leaser keeping each slot it leases, while another goroutine tries the
// lock-free takes on the same stripe. Every slot of the lease is held by
// the leaser, so no take may succeed: one that did took the room a lease
// was growing for, and the stripe held a slot more than its lease.
func TestSlotsLeaseRacesTake(t *testing.T) {
	const leases = 20000
	var p slots
	p.spare.Store(leases)
	var taken atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p.spare.Load() > 0 {
			if p.takeOnce(0) || p.take(0) {
				taken.Add(1)
				p.put(0)
			}
		}
	}()
	for range leases {
		p.lease(0) // the limiter's lock is not needed: nothing else leases
	}
	<-done
	if n := taken.Load(); n != 0 {
		t.Errorf("lock-free takes while every leased slot was held = %d, want 0", n)
	}
	if held, _ := p.held(); held != leases {
		t.Errorf("held = %d, want %d", held, leases)
	}
}
