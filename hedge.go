package recoil

import (
	"slices"
	"sync"
	"time"
)

// DefaultHedgeDelay is how long an attempt runs before a Hedge with
// neither Delay nor enough latencies for its Quantile races it.
const DefaultHedgeDelay = time.Second

// hedgeWindow is how many recent latencies a Hedge's Quantile is taken
// over, and hedgeSamples how many it needs before it is used.
const (
	hedgeWindow  = 256
	hedgeSamples = 20
)

// A Hedge races an attempt that is slow to answer with another copy of
// it: after the hedge delay, while the attempt is still in flight, the
// call starts a second attempt to the same target, and the first to
// succeed wins; the others are cancelled. Set it as Policy.Hedge.
//
// A hedge is an attempt like any other: it counts against MaxAttempts,
// takes a limiter slot of its own (a hedge never waits for one), asks the
// breaker and, under a Fallback, its target's breaker and allowance, asks
// the retry budget and the hop budget as a retry after a timeout does (each
// charges it as it charges a retry), and must fit before the deadline. A
// hedge refused at any of these steps refuses only the hedge, not the call,
// and gives back what the steps before it gave. Hedge only what is
// safe to run twice at once — idempotent requests, or requests carrying an
// idempotency key — and only where the slow tail is the dependency's
// variance, not its overload: under overload a hedge is more load, which is
// why the budget pays for it.
//
// A Hedge remembers the latencies of recent successful attempts, for
// Quantile; it is safe for concurrent use. Do not copy it after first use.
type Hedge struct {
	// Delay is how long an attempt runs before it is raced. With Quantile
	// set, it is the delay used until enough latencies are known. Zero
	// means DefaultHedgeDelay.
	Delay time.Duration
	// Quantile, between 0 and 1 (0.95, say), races an attempt once it has
	// run longer than that quantile of the recent successful attempts'
	// latencies (the last 256, once there are 20): the attempts in the slow
	// tail, and only those. Zero means the fixed Delay.
	Quantile float64
	// MaxHedges is the most hedges one call starts; zero means 1.
	MaxHedges int

	mu    sync.Mutex
	rings []*latencies // per target of the policy's Fallback, made on first use; [0] without one
}

// latencies are one target's recent successful latencies, for a Quantile.
type latencies struct {
	ring    [hedgeWindow]time.Duration
	sorted  [hedgeWindow]time.Duration // scratch for computing the quantile
	n       int                        // latencies recorded
	fresh   int                        // recorded since the quantile was computed
	current time.Duration              // the quantile, as last computed
}

func (h *Hedge) maxHedges() int {
	if h.MaxHedges <= 0 {
		return 1
	}
	return h.MaxHedges
}

// After returns the hedge delay now for a policy without a Fallback: the
// Quantile of recent latencies when it is set and known, else Delay (or
// DefaultHedgeDelay).
func (h *Hedge) After() time.Duration { return h.AfterTarget(0) }

// AfterTarget returns the hedge delay now for an attempt to the target at
// index i of the policy's Fallback (0 without one): the Quantile of that
// target's recent latencies when it is set and known — a fallback target
// is often slower or faster than the first, and racing it at the first's
// p95 would hedge all or none of its calls — else Delay (or
// DefaultHedgeDelay).
func (h *Hedge) AfterTarget(i int) time.Duration {
	fixed := h.Delay
	if fixed <= 0 {
		fixed = DefaultHedgeDelay
	}
	if h.Quantile <= 0 || h.Quantile >= 1 || i < 0 {
		return fixed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= len(h.rings) || h.rings[i] == nil {
		return fixed
	}
	l := h.rings[i]
	if l.n < hedgeSamples {
		return fixed
	}
	if l.fresh > 0 && (l.current == 0 || l.fresh >= 8) {
		// Recomputed every few samples: a sort of 256 durations per call
		// would cost more than the hedge saves. Sorted in place in the
		// scratch array, so computing it allocates nothing.
		s := l.sorted[:min(l.n, hedgeWindow)]
		copy(s, l.ring[:len(s)])
		slices.Sort(s)
		l.current = max(s[int(h.Quantile*float64(len(s)-1))], time.Millisecond)
		l.fresh = 0
	}
	return l.current
}

// Observe records the latency of a successful attempt under a policy
// without a Fallback; the engine calls it for every success of a call
// under this Hedge.
func (h *Hedge) Observe(latency time.Duration) { h.ObserveTarget(0, latency) }

// ObserveTarget records the latency of a successful attempt to the target
// at index i of the policy's Fallback (0 without one).
func (h *Hedge) ObserveTarget(i int, latency time.Duration) {
	if h.Quantile <= 0 || i < 0 || i >= maxHedgeTargets {
		return
	}
	h.mu.Lock()
	if i >= len(h.rings) {
		h.rings = append(h.rings, make([]*latencies, i+1-len(h.rings))...)
	}
	l := h.rings[i]
	if l == nil {
		l = new(latencies)
		h.rings[i] = l
	}
	l.ring[l.n%hedgeWindow] = latency
	l.n++
	l.fresh++
	h.mu.Unlock()
}

// maxHedgeTargets bounds the targets a Hedge keeps latencies for.
const maxHedgeTargets = 1 << 10
