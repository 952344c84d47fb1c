package recoil

import (
	"context"
	"time"

	"github.com/recoil-go/recoil/breaker"
)

// This file is the loop's side of latency-aware limiters and breakers
// (LatencyLimiter, LatencyBreaker) and of limiters that order by priority
// (PriorityLimiter). A policy that has none of them pays three nil checks
// per attempt and reads no clock.

// timeBase is the instant attempt starts are counted from: a reading of
// the monotonic clock, so that an attempt timed on real time is timed on
// it, while one on virtual time (a simulator's) is timed on its own clock.
var timeBase = time.Now()

// timed reports whether p's attempts are timed: its Limiter or Breaker,
// or a Fallback target's Breaker, wants latencies.
func (p *Policy) timed() bool {
	if p.Limiter == nil && p.Breaker == nil && p.Fallback == nil {
		return false
	}
	return p.wantsLatency()
}

func (p *Policy) wantsLatency() bool {
	if wants(p.Limiter) || wants(p.Breaker) {
		return true
	}
	if f := p.Fallback; f != nil {
		for i := range f.Targets {
			if wants(f.Targets[i].Breaker) {
				return true
			}
		}
	}
	return false
}

// wants reports whether a limiter or breaker takes latencies
// (LatencyLimiter, LatencyBreaker) and, if it says (a WantsLatency
// method, as breaker.Breaker's, true only with a SlowCallThreshold),
// wants them now.
func wants(x any) bool {
	switch x.(type) {
	case LatencyLimiter, LatencyBreaker:
	default:
		return false
	}
	if w, ok := x.(interface{ WantsLatency() bool }); ok {
		return w.WantsLatency()
	}
	return true
}

// begin records that the attempt in flight began at now. It is kept in
// the Call's seven spare bytes: microseconds since timeBase, shifted left
// by one with the low bit set (zero means no attempt is timed), which
// spans ±570 years — more than a time.Duration does.
func (c *Call) beginAttempt(now time.Time) {
	v := uint64(now.Sub(timeBase).Microseconds())<<1 | 1
	for i := range c.began {
		c.began[i] = byte(v >> (8 * i))
	}
}

// took returns how long the attempt begun by beginAttempt ran until now,
// and forgets its start; -1 if none was timed.
func (c *Call) took(now time.Time) time.Duration {
	var v uint64
	for i := range c.began {
		v |= uint64(c.began[i]) << (8 * i)
	}
	if v == 0 {
		return -1
	}
	c.began = [7]byte{}
	start := int64(v<<8) >> 9 // sign-extend the 56 bits, drop the flag
	return time.Duration(max(now.Sub(timeBase).Microseconds()-start, 0)) * time.Microsecond
}

// overloaded reports whether the verdict is the dependency signalling
// overload: throttled or overloaded (429, 503, 529), or a timeout.
func (p *Policy) overloaded(v *Verdict) bool {
	c := p.class(v.Class)
	return v.Timeout || c == ClassThrottled || c == ClassOverloaded
}

// giveBack returns one limiter slot after an attempt that ran lat (-1:
// not timed, or not a sample) and ended in v (nil: a success).
func (c *Call) giveBack(now time.Time, lat time.Duration, v *Verdict) {
	if lat >= 0 {
		if l, ok := c.p.Limiter.(LatencyLimiter); ok {
			l.ReleaseAt(now, lat, v != nil && c.p.overloaded(v))
			return
		}
	}
	c.p.Limiter.Release()
}

// recordOutcome reports an attempt's outcome to b, with its latency when
// b wants it and the attempt was timed (lat ≥ 0).
func recordOutcome(b Breaker, now time.Time, o breaker.Outcome, lat time.Duration) {
	if lat >= 0 {
		if lb, ok := b.(LatencyBreaker); ok {
			lb.RecordLatencyAt(now, o, lat)
			return
		}
	}
	b.RecordAt(now, o)
}

// priority is the call's priority: its context's, else its policy's.
func (c *Call) priority() Priority {
	if c.ctx != nil {
		if p, ok := c.ctx.Value(priorityKey{}).(Priority); ok {
			return p
		}
	}
	return c.p.Priority
}

// tryAcquire takes a limiter slot without waiting, for a retry (or hedge)
// or the call's first attempt.
func (c *Call) tryAcquire(retry bool) bool {
	if l, ok := c.p.Limiter.(PriorityLimiter); ok {
		return l.TryAcquireAs(c.priority(), retry)
	}
	return c.p.Limiter.TryAcquire()
}

// acquireSlot waits for a limiter slot for the next attempt under ctx.
func (c *Call) acquireSlot(ctx context.Context) error {
	if l, ok := c.p.Limiter.(PriorityLimiter); ok {
		return l.AcquireAs(ctx, c.priority(), c.attempts > 0)
	}
	return c.p.Limiter.Acquire(ctx)
}
