package limit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// ErrKeyFull is returned by Group.Acquire when the key already has PerKey
// callers holding or waiting for a slot: the call is shed at once, while
// other keys may still acquire. errors.Is(err, ErrFull) also reports true for
// it, so a caller can treat every shed alike.
var ErrKeyFull error = keyFullError{}

type keyFullError struct{}

func (keyFullError) Error() string { return "limit: key full, shed" }
func (keyFullError) Unwrap() error { return ErrFull }

// DefaultMaxKeys is the MaxKeys used when GroupConfig.MaxKeys is zero.
const DefaultMaxKeys = 1024

// GroupConfig configures a Group. The zero GroupConfig is valid:
// DefaultCapacity shared slots, DefaultCapacity/2 per key, no queue, no
// MaxWait and DefaultMaxKeys keys.
type GroupConfig struct {
	// Capacity is the total number of slots shared by every key. Zero means
	// DefaultCapacity. NewGroup refuses a negative value and one above
	// math.MaxInt32.
	Capacity int

	// PerKey caps what one key may take of Capacity: the callers of a key
	// holding a slot plus those queued for one. A caller that would exceed it
	// is shed at once with ErrKeyFull. Zero means Capacity/2 (at least 1), so
	// one saturated key leaves at least half the slots to the others; values
	// above Capacity mean Capacity (no isolation). NewGroup refuses a
	// negative value.
	PerKey int

	// MaxQueue bounds the queue, shared by all keys and served in FIFO order,
	// of callers waiting for one of the Capacity slots; they count against
	// their key's PerKey while they wait. Zero means no queue. NewGroup refuses
	// a negative value and one above math.MaxInt32.
	MaxQueue int

	// MaxWait is the longest a caller waits in the shared queue before
	// Acquire returns ErrQueueTimeout. Zero means no limit other than the
	// caller's context. NewGroup refuses a negative value.
	MaxWait time.Duration

	// MaxKeys bounds the number of keys the group tracks on their own. Keys
	// are never forgotten; once MaxKeys are known, every further key shares
	// one overflow key, which is itself capped at PerKey. Zero means
	// DefaultMaxKeys. NewGroup refuses a negative value.
	MaxKeys int
}

// KeyStats is a snapshot of one key's share of a Group.
type KeyStats struct {
	InUse int    // callers of the key holding a slot or queued for one
	Shed  uint64 // Acquire calls for the key refused with ErrKeyFull
}

// Group is a concurrency limiter shared by keys — endpoints, say — that caps
// each key's share, so one key cannot take every slot ("separate code is not
// separate capacity": docs/why.md, section 1). A call for a key
// first takes one of the key's PerKey places, shedding with ErrKeyFull if the
// key has none left, then a slot from the shared pool of Capacity, queueing
// for it like a Limiter. Per-key places cover waiters as well as holders, so
// a saturated key cannot fill the shared queue either.
//
// Group reserves no minimum per key: with a changing set of keys a
// reservation would have to be taken from a total it cannot know. With the
// default PerKey of Capacity/2, one saturated key leaves half the pool to the
// others; with PerKey = Capacity/(n+1), n saturated keys together still leave
// at least Capacity/(n+1) slots to the rest.
//
// Looking up a key takes no lock and allocates nothing, except the first
// time a key is seen, when it is added under a mutex. A Group must be
// created with NewGroup; the zero value is not usable. It is safe for
// concurrent use. Its only panic is Release for a key holding no slot, a
// programming error.
type Group struct {
	total  Limiter
	perKey int64

	keys     sync.Map    // string → *keySlots; entries are never deleted
	full     atomic.Bool // MaxKeys keys are stored; stays true
	mu       sync.Mutex  // serialises adding keys
	nkeys    int         // guarded by mu
	maxKeys  int
	overflow keySlots
}

// keySlots counts one key's holders and waiters.
type keySlots struct {
	n    atomic.Int64
	shed atomic.Uint64
}

func (k *keySlots) take(max int64) bool {
	for {
		n := k.n.Load()
		if n >= max {
			return false
		}
		if k.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (k *keySlots) put() {
	for {
		n := k.n.Load()
		if n <= 0 {
			panic("limit: Group.Release without a matching Acquire")
		}
		if k.n.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// NewGroup returns a Group configured by c; zero fields take the defaults
// documented on GroupConfig. It refuses, with a *ConfigError wrapping
// ErrConfig:
//
//   - Capacity below 0 or above math.MaxInt32;
//   - PerKey below 0;
//   - MaxQueue below 0 or above math.MaxInt32;
//   - MaxWait below 0;
//   - MaxKeys below 0.
func NewGroup(c GroupConfig) (*Group, error) {
	g := &Group{}
	if err := g.total.init(Config{Capacity: c.Capacity, MaxQueue: c.MaxQueue, MaxWait: c.MaxWait}, "GroupConfig"); err != nil {
		return nil, err
	}
	if c.PerKey < 0 {
		return nil, invalid("GroupConfig.PerKey", c.PerKey, "0 (Capacity/2) or more")
	}
	if c.MaxKeys < 0 {
		return nil, invalid("GroupConfig.MaxKeys", c.MaxKeys, "0 (DefaultMaxKeys) or more")
	}
	capacity := int64(g.total.capacity)
	g.perKey = int64(c.PerKey)
	if g.perKey == 0 {
		g.perKey = max(1, capacity/2)
	}
	g.perKey = min(g.perKey, capacity)
	g.maxKeys = c.MaxKeys
	if g.maxKeys == 0 {
		g.maxKeys = DefaultMaxKeys
	}
	return g, nil
}

// slots returns the counter for key, adding the key if need be.
func (g *Group) slots(key string) *keySlots {
	if k := g.known(key); k != nil {
		return k
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.keys.Load(key); ok {
		return v.(*keySlots)
	}
	if g.nkeys >= g.maxKeys {
		return &g.overflow
	}
	k := new(keySlots)
	g.keys.Store(key, k)
	g.nkeys++
	if g.nkeys == g.maxKeys {
		g.full.Store(true)
	}
	return k
}

// known returns the counter for key without adding the key, or nil if key
// has never been seen and could still be added. It takes no lock: keys are
// never deleted, so a key missing once MaxKeys are stored stays missing and
// belongs to the overflow key.
func (g *Group) known(key string) *keySlots {
	if v, ok := g.keys.Load(key); ok {
		return v.(*keySlots)
	}
	if g.full.Load() {
		return &g.overflow
	}
	return nil
}

// TryAcquire takes a slot for key if the key is under PerKey and a shared
// slot is free with nobody queued, and reports whether it did. It never
// blocks. A true result must be paired with exactly one Release(key).
func (g *Group) TryAcquire(key string) bool {
	k := g.slots(key)
	if !k.take(g.perKey) {
		return false
	}
	if !g.total.TryAcquire() {
		k.put()
		return false
	}
	return true
}

// Acquire takes a slot for key, waiting in the shared queue if necessary. It
// returns nil once the caller holds a slot, which it must give back with
// Release(key). Otherwise it holds nothing and returns context.Cause(ctx) if
// ctx is done first (including on entry), ErrKeyFull at once if the key
// already has PerKey callers holding or queued, and otherwise what
// Limiter.Acquire returns: ErrFull when the shared slots and queue are full,
// ErrQueueTimeout after MaxWait.
func (g *Group) Acquire(ctx context.Context, key string) error {
	if ctx.Err() != nil {
		g.total.canceled.Add(1)
		return context.Cause(ctx)
	}
	k := g.slots(key)
	if !k.take(g.perKey) {
		k.shed.Add(1)
		return ErrKeyFull
	}
	if err := g.total.Acquire(ctx); err != nil {
		k.put()
		return err
	}
	return nil
}

// Release gives back a slot taken for key by TryAcquire or Acquire. It
// panics if key holds no slot.
func (g *Group) Release(key string) {
	k := g.known(key)
	if k == nil {
		panic("limit: Group.Release without a matching Acquire")
	}
	k.put()
	g.total.Release()
}

// Stats returns a snapshot of the shared pool. Its Shed counts only sheds
// for want of a shared slot or queue place (ErrFull); sheds for a key over
// PerKey are in KeyStats.
func (g *Group) Stats() Stats { return g.total.Stats() }

// KeyStats returns a snapshot of key's share. A key never seen reports
// zeros; a key beyond MaxKeys reports the overflow key it shares.
func (g *Group) KeyStats(key string) KeyStats {
	k := g.known(key)
	if k == nil {
		return KeyStats{}
	}
	return KeyStats{InUse: int(k.n.Load()), Shed: k.shed.Load()}
}
