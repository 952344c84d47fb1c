package limit

import "sync/atomic"

// slots is a Limiter's Capacity, spread over stripes so that a goroutine
// that takes a slot and gives it back writes only its own stripe's cache
// line, not a word every core shares.
//
// Each stripe holds a lease — slots it may hand out — and counts how many
// of them are held. A slot is taken where its stripe's lease has room and
// given back to any stripe holding one, so the sum of the held counts is
// exactly the slots held, and it never passes Capacity less the spare
// slots no stripe has leased yet: the sum of the leases, but for a slot
// being leased, which is counted held a moment before its stripe's lease
// grows to cover it. A stripe's lease grows from the spare slots, one at a
// time and under the limiter's lock, the first times its goroutines find
// it full; leases never shrink, so that happens
// at most Capacity times in a limiter's life. Past that a goroutine whose
// stripe is full takes a slot where another stripe's lease has room, and
// gives one back where it finds one held.
//
// A stripe's word packs held (the low 31 bits), a seal bit — a sealed
// stripe is being counted under the lock, and the lock-free paths leave it
// alone — and, in the high 32 bits, the slots ever taken from it, which
// wraps into the stripe's wraps; so taking a slot and counting it for
// Stats.Acquired is one compare-and-swap. The lease, in a word of its own
// on the same line, only grows, and only under the lock.
type slots struct {
	s [stripes]struct {
		w     atomic.Uint64 // held | sealed<<31 | taken<<32
		lease atomic.Uint64 // the slots this stripe may hand out
		wraps atomic.Uint64 // how many times taken wrapped
		_     [cacheLine - 24]byte
	}
	spare atomic.Int64 // slots no stripe has leased; falls only under the lock
}

const (
	heldMask = 1<<31 - 1
	sealBit  = 1 << 31
	oneTake  = 1<<32 + 1 // one more held, one more taken
)

func heldOf(w uint64) uint64 { return w & heldMask }

// take takes a slot from stripe i's lease, if it has room and is not
// sealed. A lease read before a grow is only smaller than the one after,
// so the check never lets a stripe hold more than its lease.
func (p *slots) take(i int) bool {
	st := &p.s[i]
	lease := st.lease.Load()
	for {
		v := st.w.Load()
		if v&sealBit != 0 || heldOf(v) >= lease {
			return false
		}
		if st.w.CompareAndSwap(v, v+oneTake) {
			if v>>32 == 1<<32-1 {
				st.wraps.Add(1)
			}
			return true
		}
	}
}

// takeOnce is take's first try, small enough to be inlined into the
// limiter's fast paths: one compare-and-swap, and false (leaving the rest
// to take) if it fails, the stripe is sealed or full, or its taken count
// is about to wrap.
func (p *slots) takeOnce(i int) bool {
	st := &p.s[i]
	v := st.w.Load()
	return v&sealBit == 0 && heldOf(v) < st.lease.Load() && v>>32 != 1<<32-1 &&
		st.w.CompareAndSwap(v, v+oneTake)
}

// put gives a slot back to stripe i, if it holds one and is not sealed.
func (p *slots) put(i int) bool {
	w := &p.s[i].w
	for {
		v := w.Load()
		if v&sealBit != 0 || heldOf(v) == 0 {
			return false
		}
		if w.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// takeOther takes a slot from the first stripe after i with room.
func (p *slots) takeOther(i int) bool {
	for k := 1; k < stripes; k++ {
		if p.take((i + k) & (stripes - 1)) {
			return true
		}
	}
	return false
}

// putOther gives a slot back to the first stripe after i holding one.
func (p *slots) putOther(i int) bool {
	for k := 1; k < stripes; k++ {
		if p.put((i + k) & (stripes - 1)) {
			return true
		}
	}
	return false
}

// lease moves a spare slot into stripe i's lease and takes it; false if
// none is spare. The limiter's lock must be held.
func (p *slots) lease(i int) bool {
	if p.spare.Load() <= 0 {
		return false
	}
	p.spare.Add(-1)
	st := &p.s[i]
	// The slot is counted held before the lease grows to cover it: grown
	// first, the lease would show a lock-free take on this stripe the
	// room this slot is for, and the stripe would hold one more than its
	// lease. Counted first, the stripe holds one more for a moment, and
	// its takes refuse until the lease catches up.
	if st.w.Add(oneTake)>>32 == 0 {
		st.wraps.Add(1)
	}
	st.lease.Add(1)
	return true
}

// putSealed gives a slot back to any stripe holding one, with every
// stripe sealed, so that the count it finds is exact; false if no slot
// is held. The limiter's lock must be held.
func (p *slots) putSealed() bool {
	var v [stripes]uint64
	for i := range p.s {
		for {
			v[i] = p.s[i].w.Load()
			if p.s[i].w.CompareAndSwap(v[i], v[i]|sealBit) {
				break
			}
		}
	}
	found := false
	for i := range v {
		if !found && heldOf(v[i]) > 0 {
			v[i]--
			found = true
		}
		p.s[i].w.Store(v[i]) // unseal: nothing else writes a sealed stripe
	}
	return found
}

// held returns the slots held, and taken those ever taken: exact when
// nothing takes or gives one back meanwhile.
func (p *slots) held() (held, taken uint64) {
	for i := range p.s {
		v := p.s[i].w.Load()
		held += heldOf(v)
		taken += p.s[i].wraps.Load()<<32 + v>>32
	}
	return held, taken
}
