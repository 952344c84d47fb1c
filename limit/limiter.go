package limit

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil/internal/config"
	"github.com/recoil-go/recoil/internal/priority"
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

	// MaxQueue is the number of callers that may wait for a slot when all
	// are held, served best rank first and FIFO within a rank (see
	// Limiter). Zero means no queue: Acquire sheds at once with
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
// Capacity callers hold it at once, at most MaxQueue more wait for a slot
// for at most MaxWait, and the rest are shed with ErrFull. Waiters are
// served by priority as an Adaptive limiter's are (AcquireAs): interactive
// first attempts, then interactive retries, background first attempts,
// background retries, FIFO within each; a caller that finds the queue full
// takes the place of the newest waiter of a worse rank, which is shed with
// ErrFull. Acquire is the interactive first attempt's. A caller arriving
// later (through TryAcquire or Acquire) never overtakes the queue.
//
// The slots are spread over stripes, each on its own cache line, and a
// goroutine takes and gives back a slot on its own stripe (see slots), so
// TryAcquire and Release on the healthy path take no lock and write no
// word every core shares: one compare-and-swap on the stripe's line each
// (which also counts the slot for Stats.Acquired), and a read of the
// queued count, which changes only when callers queue. Nothing on these paths
// allocates. A stripe that runs out borrows from the spare slots under the
// lock (at most Capacity times in the limiter's life) or, once every slot
// is leased, takes one from another stripe without a lock. A TryAcquire
// that runs while slots move between stripes may be refused as if it came
// just before the Release that freed one; it never takes a slot beyond
// Capacity.
//
// A Limiter must be created with New; the zero value is not usable. It is
// safe for concurrent use. Its only panic is Release without a slot held, a
// programming error.
//
// Limiter has no explicit-now methods because none of its decisions read a
// clock: TryAcquire and Release only count, and time enters only through
// Acquire's MaxWait timer. A discrete-event simulator calls TryAcquire and
// Release at its virtual instants and models the queue itself from the
// Config (MaxQueue places, each with a MaxWait deadline), or runs real
// Acquire calls inside testing/synctest, where MaxWait elapses on the fake
// clock exactly. A caller that has to queue allocates its place in the
// queue (and a timer when MaxWait is set).
type Limiter struct {
	slots slots

	// waiting is the number of callers queued. It changes only under mu,
	// when callers queue, are served or leave; the healthy path only
	// reads it, so its line stays in every core's cache. It shares the
	// line only with fields that never change.
	waiting  atomic.Int64
	capacity uint64
	maxQueue uint64
	maxWait  time.Duration
	_        [cacheLine - 32]byte

	mu    sync.Mutex
	queue rankQueue // guarded by mu

	waited   atomic.Uint64
	passed   atomic.Uint64 // slots granted to a waiter whose ctx ended: not Acquired
	shed     atomic.Uint64
	timedOut atomic.Uint64
	canceled atomic.Uint64
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
	l.slots.spare.Store(int64(c.Capacity))
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
	if l.waiting.Load() != 0 {
		return false
	}
	i := stripe()
	return l.slots.takeOnce(i) || l.take(i)
}

// TryAcquireAs is TryAcquire: priorities order the queue, and TryAcquire
// never joins it. With AcquireAs it makes a Limiter a
// recoil.PriorityLimiter.
func (l *Limiter) TryAcquireAs(Priority, bool) bool { return l.TryAcquire() }

// take takes a slot without the lock, or by borrowing a spare one under
// it: from stripe i, the spare slots, then any stripe.
func (l *Limiter) take(i int) bool {
	if l.slots.take(i) {
		return true
	}
	if l.slots.spare.Load() > 0 {
		l.mu.Lock()
		ok := l.slots.lease(i)
		l.mu.Unlock()
		if ok {
			return true
		}
	}
	return l.slots.takeOther(i)
}

// takeLocked is take with l.mu held.
func (l *Limiter) takeLocked(i int) bool {
	return l.slots.take(i) || l.slots.lease(i) || l.slots.takeOther(i)
}

// Acquire is AcquireAs(ctx, Interactive, false).
func (l *Limiter) Acquire(ctx context.Context) error {
	if ctx.Err() == nil && l.waiting.Load() == 0 && l.slots.takeOnce(stripe()) {
		return nil // AcquireAs's first step, without a call
	}
	return l.AcquireAs(ctx, Interactive, false)
}

// AcquireAs takes a slot for an attempt of priority p (retry: not the
// call's first), waiting for one if necessary. It returns nil once the
// caller holds a slot, which it must give back with Release. Otherwise it
// holds nothing and returns:
//
//   - context.Cause(ctx) if ctx is done before a slot is taken (including on
//     entry, even when a slot is free);
//   - ErrFull at once if every slot is held and MaxQueue callers of the same
//     rank or better are already waiting, or later if a better-ranked
//     caller takes its place in the queue;
//   - ErrQueueTimeout if it has waited MaxWait without getting a slot.
//
// If ctx is canceled at the moment a slot is handed to the caller,
// AcquireAs passes the slot on (as Release would) and returns the cause,
// so no slot is leaked; if MaxWait elapses at that moment instead, the
// caller keeps the slot and AcquireAs returns nil.
func (l *Limiter) AcquireAs(ctx context.Context, p Priority, retry bool) error {
	if ctx.Err() != nil {
		l.canceled.Add(1)
		return context.Cause(ctx)
	}
	if l.TryAcquire() {
		return nil
	}
	if l.maxQueue == 0 {
		l.shed.Add(1)
		return ErrFull
	}
	return l.wait(ctx, priority.Rank(p, retry))
}

// wait queues the caller, or takes a slot or sheds if the state changed
// before it could: it decides again under the lock.
func (l *Limiter) wait(ctx context.Context, rank int) error {
	l.mu.Lock()
	if l.waiting.Load() == 0 && l.takeLocked(stripe()) {
		l.mu.Unlock()
		return nil
	}
	if uint64(l.waiting.Load()) >= l.maxQueue {
		if !l.queue.evictWorse(rank) {
			l.mu.Unlock()
			l.shed.Add(1)
			return ErrFull
		}
		l.waiting.Add(-1)
	}
	w := &waiter{ready: make(chan struct{}), rank: rank}
	l.queue.push(w)
	l.waiting.Add(1)
	// A Release that gave its slot back before it could see this caller
	// queued left it free: the grant finds it. One that sees the caller
	// queued takes the lock and grants it.
	l.grant()
	granted := w.granted
	l.mu.Unlock()
	if granted {
		return l.woken(w)
	}

	var expired <-chan time.Time
	if l.maxWait > 0 {
		t := time.NewTimer(l.maxWait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-w.ready:
		return l.woken(w)
	case <-ctx.Done():
		if l.withdraw(w) {
			if w.evicted {
				l.shed.Add(1)
				return ErrFull
			}
			l.passed.Add(1)
			l.Release() // the slot arrived as ctx was canceled: pass it on
		}
		l.canceled.Add(1)
		return context.Cause(ctx)
	case <-expired:
		if l.withdraw(w) {
			return l.woken(w) // granted (or evicted) as MaxWait ran out
		}
		l.timedOut.Add(1)
		return ErrQueueTimeout
	}
}

// woken reports the end of a wait whose waiter was granted or evicted.
func (l *Limiter) woken(w *waiter) error {
	if w.evicted {
		l.shed.Add(1)
		return ErrFull
	}
	l.waited.Add(1)
	return nil
}

// withdraw takes w out of the queue, or reports that it was granted a slot
// (which the caller now holds) or evicted first.
func (l *Limiter) withdraw(w *waiter) (done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted || w.evicted {
		return true
	}
	l.queue.remove(w)
	l.waiting.Add(-1)
	return false
}

// grant hands free slots to the waiters, best rank first; l.mu must be
// held.
func (l *Limiter) grant() {
	for w := l.queue.first(); w != nil; w = l.queue.first() {
		if !l.takeLocked(stripe()) {
			return
		}
		l.waiting.Add(-1)
		l.queue.grant(w)
	}
}

// Release gives back a slot taken by TryAcquire or Acquire. If callers are
// queued, the slot passes to the best-ranked one that has waited longest.
//
// Release panics if no slot is held. It cannot detect every unpaired Release:
// while callers are queued all slots are held, and an extra Release hands a
// slot that does not exist to a waiter.
func (l *Limiter) Release() {
	if i := stripe(); !l.slots.put(i) && !l.slots.putOther(i) {
		l.releaseLocked()
	}
	if l.waiting.Load() != 0 {
		l.handOff()
	}
}

// errUnpaired is the panic of a Release with no slot held.
const errUnpaired = "limit: Release without a matching Acquire"

// releaseLocked gives a slot back once no stripe was found holding one
// without the lock: it counts them again, sealed, and panics if none is
// held.
func (l *Limiter) releaseLocked() {
	l.mu.Lock()
	ok := l.slots.putSealed()
	l.mu.Unlock()
	if !ok {
		panic(errUnpaired)
	}
}

// handOff is the end of a Release that found callers queued: under the
// lock, the slot it gave back goes to the best waiter, unless another
// caller took it first or every waiter has withdrawn since.
func (l *Limiter) handOff() {
	l.mu.Lock()
	l.grant()
	l.mu.Unlock()
}

// InUse returns the number of slots held now.
func (l *Limiter) InUse() int {
	held, _ := l.slots.held()
	return int(held)
}

// Queued returns the number of callers waiting for a slot now.
func (l *Limiter) Queued() int { return int(l.waiting.Load()) }

// Stats returns a snapshot of the limiter's gauges and counters.
func (l *Limiter) Stats() Stats {
	held, taken := l.slots.held()
	return Stats{
		InUse:    int(held),
		Queued:   l.Queued(),
		Acquired: taken - l.passed.Load(),
		Waited:   l.waited.Load(),
		Shed:     l.shed.Load(),
		TimedOut: l.timedOut.Load(),
		Canceled: l.canceled.Load(),
	}
}
