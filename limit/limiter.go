package limit

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/internal/config"
)

// ErrFull is returned by Acquire when every slot is held and the wait queue
// is full: the call is shed at once rather than queued. Shedding is local
// overload; retrying at once only adds to it.
var ErrFull = errors.New("limit: full, shed")

// ErrQueueTimeout is returned by Acquire when a caller has waited in the queue
// for Config.MaxWait without being given a slot.
var ErrQueueTimeout = errors.New("limit: queue wait exceeded MaxWait")

// ErrConfig is wrapped by every error New and NewGroup return: a field of
// the configuration is out of range. errors.Is(err, ErrConfig) tests for
// it; errors.As with a *ConfigError names the field.
var ErrConfig = errors.New("limit: invalid configuration")

// ConfigError reports the configuration field New or NewGroup refused: its
// Field ("Config.Capacity"), the Value refused, what the field accepts
// (Want), and ErrConfig as Err. It is one type shared by the recoil
// packages that validate a configuration (breaker, budget, limit), so
// errors.As with any of their ConfigError types catches each of them.
type ConfigError = config.Error

// Must returns l if err is nil and panics with err otherwise. It wraps a
// call of New or NewGroup with a literal configuration, where a refusal is
// a programming error:
//
//	var lim = limit.Must(limit.New(limit.Config{Capacity: 24}))
func Must[T *Limiter | *Group | *Adaptive](l T, err error) T { return config.Must(l, err) }

// DefaultCapacity is the Capacity used when Config.Capacity (or
// GroupConfig.Capacity) is zero. It is the worker pool of the service in
// docs/why.md, section 1 (24 request-handling workers shared by every
// endpoint); pick your own number — "a number you chose beats a number
// your connection pool chose for you".
const DefaultCapacity = 24

// maxField bounds Capacity and MaxQueue so each fits a 32-bit half of the
// limiter's state word.
const maxField = math.MaxInt32

// Config configures a Limiter. The zero Config is valid: DefaultCapacity
// holders, no queue (a caller that finds every slot held is shed at once with
// ErrFull) and no MaxWait.
type Config struct {
	// Capacity is the number of slots: how many callers may hold the limiter
	// at once. Zero means DefaultCapacity. New refuses a negative value and
	// one above math.MaxInt32.
	Capacity int

	// MaxQueue is the number of callers that may wait, in FIFO order, for a
	// slot when all are held. Zero means no queue: Acquire sheds at once with
	// ErrFull when every slot is held. The queue is always bounded: there is
	// no unbounded setting, and New refuses a negative value and one above
	// math.MaxInt32.
	MaxQueue int

	// MaxWait is the longest a caller waits in the queue before Acquire
	// returns ErrQueueTimeout. Zero means no limit other than the caller's
	// context. New refuses a negative value.
	MaxWait time.Duration
}

// Stats is a snapshot of a Limiter's gauges and counters, for metrics.
// Counters only grow; they are read one at a time, so a snapshot taken while
// calls are in flight need not be exactly consistent across fields.
type Stats struct {
	InUse  int // slots held now
	Queued int // callers waiting for a slot now

	Acquired uint64 // successful acquisitions, TryAcquire and Acquire
	Waited   uint64 // of Acquired, those that waited in the queue first
	Shed     uint64 // Acquire calls refused with ErrFull (TryAcquire refusals are not counted)
	TimedOut uint64 // Acquire calls that returned ErrQueueTimeout
	Canceled uint64 // Acquire calls that returned the context's cause
}

// Limiter is a concurrency limiter (a semaphore, or bulkhead): at most
// Capacity callers hold it at once, at most MaxQueue more wait for a slot in
// FIFO order for at most MaxWait, and the rest are shed with ErrFull.
//
// TryAcquire, and Acquire when a slot is free, take no lock: one
// compare-and-swap on a state word, plus an atomic increment of the Acquired
// counter, which is striped over cache lines so that cores do not contend
// for it. A Release with nobody waiting is one more compare-and-swap, and
// a refusal (TryAcquire false, or ErrFull) writes nothing shared but the
// Shed counter. Nothing on these paths allocates. Waiting callers are queued under a mutex and each released slot is handed
// directly to the longest waiter, so a caller arriving later (through
// TryAcquire or Acquire) never overtakes the queue.
//
// A Limiter must be created with New; the zero value is not usable. It is
// safe for concurrent use. Its only panic is Release without a slot held, a
// programming error.
//
// Limiter has no explicit-now methods because none of its decisions read a
// clock: TryAcquire and Release only count, and time enters only through
// Acquire's MaxWait timer. A discrete-event simulator calls TryAcquire and
// Release at its virtual instants and models the queue itself from the
// Config (MaxQueue places, served in FIFO order, each with a MaxWait
// deadline), or runs real Acquire calls inside testing/synctest, where
// MaxWait elapses on the fake clock exactly. A caller that has to queue
// allocates its place in the queue (and a timer when MaxWait is set).
type Limiter struct {
	// state packs the slots held (low 32 bits) and the callers queued (high
	// 32 bits) so that TryAcquire and Release see both in one atomic word.
	// The queued half changes only under mu. Whenever it is non-zero every
	// slot is held: Release then hands its slot to a waiter instead of
	// freeing it, and TryAcquire fails.
	state    atomic.Uint64
	acquired counter // striped: added to on every acquisition

	capacity uint64
	maxQueue uint64
	maxWait  time.Duration

	mu         sync.Mutex
	head, tail *waiter // FIFO queue, guarded by mu

	waited   atomic.Uint64
	shed     atomic.Uint64
	timedOut atomic.Uint64
	canceled atomic.Uint64
}

const (
	inUseMask      = 1<<32 - 1
	oneQueued      = 1 << 32
	minusOneQueued = ^uint64(oneQueued - 1) // adding it takes one from queued
)

func inUse(s uint64) uint64  { return s & inUseMask }
func queued(s uint64) uint64 { return s >> 32 }

// waiter is one caller queued in Acquire.
type waiter struct {
	ready      chan struct{} // closed once granted
	granted    bool          // guarded by Limiter.mu: a slot was handed over
	prev, next *waiter       // guarded by Limiter.mu
}

// New returns a Limiter configured by c; zero fields take the defaults
// documented on Config. It refuses, with a *ConfigError wrapping ErrConfig:
//
//   - Capacity below 0 or above math.MaxInt32;
//   - MaxQueue below 0 or above math.MaxInt32;
//   - MaxWait below 0.
func New(c Config) (*Limiter, error) {
	l := &Limiter{}
	if err := l.init(c, "Config"); err != nil {
		return nil, err
	}
	return l, nil
}

// init configures l from c, naming the refused field as typ.Field.
func (l *Limiter) init(c Config, typ string) error {
	switch {
	case c.Capacity < 0 || c.Capacity > maxField:
		return invalid(typ+".Capacity", c.Capacity, "0 to 2147483647")
	case c.MaxQueue < 0 || c.MaxQueue > maxField:
		return invalid(typ+".MaxQueue", c.MaxQueue, "0 to 2147483647 (the queue is always bounded)")
	case c.MaxWait < 0:
		return invalid(typ+".MaxWait", c.MaxWait, "0 (no limit) or more")
	}
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	l.capacity = uint64(c.Capacity)
	l.maxQueue = uint64(c.MaxQueue)
	l.maxWait = c.MaxWait
	return nil
}

// invalid returns the error refusing value for field.
func invalid(field string, value any, want string) error {
	return &ConfigError{Field: field, Value: value, Want: want, Err: ErrConfig}
}

// TryAcquire takes a slot if one is free and nobody is queued for one, and
// reports whether it did. It never blocks. A true result must be paired with
// exactly one Release.
func (l *Limiter) TryAcquire() bool {
	for {
		s := l.state.Load()
		if inUse(s) >= l.capacity || queued(s) != 0 {
			return false
		}
		if l.state.CompareAndSwap(s, s+1) {
			l.acquired.add()
			return true
		}
	}
}

// Acquire takes a slot, waiting for one if necessary. It returns nil once the
// caller holds a slot, which it must give back with Release. Otherwise it
// holds nothing and returns:
//
//   - context.Cause(ctx) if ctx is done before a slot is taken (including on
//     entry, even when a slot is free);
//   - ErrFull at once if every slot is held and MaxQueue callers are already
//     waiting;
//   - ErrQueueTimeout if it has waited MaxWait without getting a slot.
//
// Waiters are served in FIFO order. If ctx is canceled at the moment a slot
// is handed to the caller, Acquire passes the slot on (as Release would) and
// returns the cause, so no slot is leaked; if MaxWait elapses at that moment
// instead, the caller keeps the slot and Acquire returns nil.
func (l *Limiter) Acquire(ctx context.Context) error {
	if ctx.Err() != nil {
		l.canceled.Add(1)
		return context.Cause(ctx)
	}
	for {
		s := l.state.Load()
		if inUse(s) < l.capacity && queued(s) == 0 {
			if l.state.CompareAndSwap(s, s+1) {
				l.acquired.add()
				return nil
			}
			continue
		}
		if queued(s) >= l.maxQueue {
			l.shed.Add(1)
			return ErrFull
		}
		return l.wait(ctx)
	}
}

// wait queues the caller, or takes a slot or sheds if the state changed
// before it could: it decides again under the lock, from the state alone.
func (l *Limiter) wait(ctx context.Context) error {
	l.mu.Lock()
	for {
		s := l.state.Load()
		if inUse(s) < l.capacity && queued(s) == 0 {
			if l.state.CompareAndSwap(s, s+1) {
				l.mu.Unlock()
				l.acquired.add()
				return nil
			}
			continue
		}
		if queued(s) >= l.maxQueue {
			l.mu.Unlock()
			l.shed.Add(1)
			return ErrFull
		}
		if l.state.CompareAndSwap(s, s+oneQueued) {
			break
		}
	}
	w := &waiter{ready: make(chan struct{})}
	l.push(w)
	l.mu.Unlock()

	var expired <-chan time.Time
	if l.maxWait > 0 {
		t := time.NewTimer(l.maxWait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-w.ready:
		l.acquired.add()
		l.waited.Add(1)
		return nil
	case <-ctx.Done():
		if l.withdraw(w) {
			// The slot arrived as ctx was canceled: pass it on.
			l.Release()
		}
		l.canceled.Add(1)
		return context.Cause(ctx)
	case <-expired:
		if l.withdraw(w) {
			// The slot arrived as MaxWait ran out: keep it.
			l.acquired.add()
			l.waited.Add(1)
			return nil
		}
		l.timedOut.Add(1)
		return ErrQueueTimeout
	}
}

// withdraw takes w out of the queue, or reports that it was granted a slot
// first, in which case the caller now holds that slot.
func (l *Limiter) withdraw(w *waiter) (granted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		return true
	}
	l.remove(w)
	l.state.Add(minusOneQueued)
	return false
}

// Release gives back a slot taken by TryAcquire or Acquire. If callers are
// queued, the slot passes directly to the one that has waited longest.
//
// Release panics if no slot is held. It cannot detect every unpaired Release:
// while callers are queued all slots are held, and an extra Release hands a
// slot that does not exist to a waiter.
func (l *Limiter) Release() {
	if !freeSlot(&l.state) {
		l.handOff()
	}
}

// errUnpaired is the panic of a Release with no slot held.
const errUnpaired = "limit: Release without a matching Acquire"

// freeSlot frees a slot of state (inUse | queued<<32) when no caller is
// queued, and reports whether it did; false leaves the slot held, for the
// caller to hand off under its lock. It panics if no slot is held.
func freeSlot(state *atomic.Uint64) bool {
	for {
		s := state.Load()
		if queued(s) != 0 {
			return false
		}
		if inUse(s) == 0 {
			panic(errUnpaired)
		}
		if state.CompareAndSwap(s, s-1) {
			return true
		}
	}
}

// freeLocked frees a slot of state whose queue is held still by the
// caller's lock, so that only inUse can change; false means no slot was
// held (the caller unlocks and panics).
func freeLocked(state *atomic.Uint64) bool {
	for {
		s := state.Load()
		if inUse(s) == 0 {
			return false
		}
		if state.CompareAndSwap(s, s-1) {
			return true
		}
	}
}

// handOff is Release once callers were seen queued: under the lock, it
// gives the slot to the longest waiter or, if every waiter has withdrawn
// since, frees it.
func (l *Limiter) handOff() {
	l.mu.Lock()
	if w := l.head; w != nil {
		l.remove(w)
		w.granted = true
		l.state.Add(minusOneQueued) // the slot moves to w; inUse is unchanged
		l.mu.Unlock()
		close(w.ready)
		return
	}
	// The waiters withdrew before we took the lock; free the slot. With mu
	// held the queued half stays zero, so only inUse can change under us.
	ok := freeLocked(&l.state)
	l.mu.Unlock()
	if !ok {
		panic(errUnpaired)
	}
}

// InUse returns the number of slots held now.
func (l *Limiter) InUse() int { return int(inUse(l.state.Load())) }

// Queued returns the number of callers waiting for a slot now.
func (l *Limiter) Queued() int { return int(queued(l.state.Load())) }

// Stats returns a snapshot of the limiter's gauges and counters.
func (l *Limiter) Stats() Stats {
	s := l.state.Load()
	return Stats{
		InUse:    int(inUse(s)),
		Queued:   int(queued(s)),
		Acquired: l.acquired.load(),
		Waited:   l.waited.Load(),
		Shed:     l.shed.Load(),
		TimedOut: l.timedOut.Load(),
		Canceled: l.canceled.Load(),
	}
}

// push appends w to the queue; l.mu must be held.
func (l *Limiter) push(w *waiter) {
	w.prev = l.tail
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
}

// remove unlinks w from the queue; l.mu must be held.
func (l *Limiter) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next = nil, nil
}
