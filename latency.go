package recoil

import (
	"time"

	"github.com/recoil-go/recoil/breaker"
)

// This file is the loop's side of latency-aware limiters and breakers
// (LatencyLimiter, LatencyBreaker) and of limiters that order by priority
// (PriorityLimiter). A policy that has none of them pays three nil checks
// per attempt and reads no clock.

// wantsLatency reports whether p's attempts are timed: its Limiter or
// Breaker, or a Fallback target's Breaker, wants latencies. Call.begin asks
// it only of a policy that has one of them (most have none). Each is asked
// only if set: a nil one converted to wants' argument would cost a call
// per target.
func (p *Policy) wantsLatency() bool {
	if p.Limiter != nil && wants(p.Limiter) || p.Breaker != nil && wants(p.Breaker) {
		return true
	}
	if f := p.Fallback; f != nil {
		for i := range f.Targets {
			if b := f.Targets[i].Breaker; b != nil && wants(b) {
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
