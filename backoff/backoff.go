// Package backoff holds pure retry schedules: each computes the wait before a
// retry from the retry's number, the previous wait and a random source, and
// keeps no state of its own. A schedule is safe for concurrent use whenever
// its random source is; the same schedule value can serve every call.
//
// Retry numbers count from 1: Delay(1, …) is the wait before the first retry
// (the second attempt). A hand-written wrapper of five attempts doubling from
// one second is
//
//	backoff.Exponential{Base: time.Second}
//
// whose Delay(1…4) are 1 s, 2 s, 4 s and 8 s: fifteen seconds of sleeping.
package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// Source is the random source a schedule draws from. *rand.Rand from
// math/rand/v2 satisfies it (it is not safe for concurrent use; wrap it or use
// one per goroutine); a nil Source means math/rand/v2's global generator, which
// is safe for concurrent use.
type Source interface {
	// Int64N returns a uniform value in [0, n); n > 0.
	Int64N(n int64) int64
}

// Schedule computes the wait before retry number retry (1 is the first
// retry), given the previous wait (zero before the first retry) and a random
// source (nil means the global generator). It must return a non-negative
// duration and must not keep state between calls.
type Schedule interface {
	Delay(retry int, prev time.Duration, rnd Source) time.Duration
}

// DefaultMultiplier is the growth factor used when a schedule's Multiplier is
// zero: doubling, as in most hand-written wrappers and Brooker's formulas.
const DefaultMultiplier = 2.0

// ceiling is min(max, base·mult^(retry-1)), computed without overflow. A zero
// max means no cap other than the largest time.Duration.
func ceiling(base, max time.Duration, mult float64, retry int) time.Duration {
	if base <= 0 {
		return 0
	}
	if mult == 0 {
		mult = DefaultMultiplier
	}
	if max <= 0 {
		max = math.MaxInt64
	}
	if retry < 1 {
		retry = 1
	}
	if mult <= 1 {
		return min(base, max)
	}
	if mult == 2 && retry <= 63 {
		// Exact integer doubling for the common case.
		if base > max>>(retry-1) {
			return max
		}
		return base << (retry - 1)
	}
	f := float64(base) * math.Pow(mult, float64(retry-1))
	if f >= float64(max) || math.IsNaN(f) {
		return max
	}
	return time.Duration(f)
}

// uniform returns a value uniformly distributed in [lo, hi].
func uniform(rnd Source, lo, hi time.Duration) time.Duration {
	lo = max(lo, 0)
	if hi <= lo {
		return lo
	}
	span := int64(hi - lo)
	if span == math.MaxInt64 {
		span-- // keep span+1 positive
	}
	if rnd == nil {
		return lo + time.Duration(rand.Int64N(span+1))
	}
	return lo + time.Duration(rnd.Int64N(span+1))
}

// Exponential waits Base·Multiplier^(retry-1), capped at Max, with no jitter:
// the schedule of most hand-written loops. Without jitter every client that
// failed together retries together (docs/why.md, section 6), so
// prefer FullJitter; Exponential exists to model what is already deployed.
//
// The zero Multiplier means DefaultMultiplier (2); the zero Max means no cap.
type Exponential struct {
	Base       time.Duration
	Multiplier float64
	Max        time.Duration
}

// Delay implements Schedule.
func (e Exponential) Delay(retry int, _ time.Duration, _ Source) time.Duration {
	return ceiling(e.Base, e.Max, e.Multiplier, retry)
}

// FullJitter waits a uniform random time in [0, min(Max, Base·Multiplier^(retry-1))].
// Source: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture
// Blog, 2015 ("Full Jitter": sleep = random_between(0, min(cap, base·2^attempt))).
// It spreads a synchronised crowd evenly over the window and, in Brooker's
// measurements, does the least total work of the jittered schedules. It is
// what tenacity's wait_random_exponential, Polly's DecorrelatedJitterBackoffV2
// and gRFC A6's retry policy implement.
//
// The zero Multiplier means 2; the zero Max means no cap.
type FullJitter struct {
	Base       time.Duration
	Multiplier float64
	Max        time.Duration
}

// Delay implements Schedule.
func (f FullJitter) Delay(retry int, _ time.Duration, rnd Source) time.Duration {
	return uniform(rnd, 0, ceiling(f.Base, f.Max, f.Multiplier, retry))
}

// EqualJitter keeps half of the exponential ceiling and jitters the other
// half: v = min(Max, Base·Multiplier^(retry-1)); wait = v/2 + random_between(0, v/2).
// Source: Brooker, AWS Architecture Blog, 2015 ("Equal Jitter"). It never
// waits less than half the ceiling, at the cost of more total work than
// FullJitter.
//
// The zero Multiplier means 2; the zero Max means no cap.
type EqualJitter struct {
	Base       time.Duration
	Multiplier float64
	Max        time.Duration
}

// Delay implements Schedule.
func (e EqualJitter) Delay(retry int, _ time.Duration, rnd Source) time.Duration {
	v := ceiling(e.Base, e.Max, e.Multiplier, retry)
	half := v / 2
	return uniform(rnd, v-half, v)
}

// Decorrelated grows each wait from the previous one rather than from the
// retry number: wait = random_between(Base, min(Max, prev·3)), with
// prev = Base before the first retry. Source: Brooker, AWS Architecture
// Blog, 2015 ("Decorrelated Jitter"), which caps after drawing,
// min(Max, random_between(Base, prev·3)): there a wait lands on the cap
// whenever the draw passes it, and the waits bunch at Max once prev·3
// nears it. Drawing below the cap keeps them spread over [Base, Max]
// instead. It needs the previous wait, which the retry loop passes in; the
// schedule itself stays stateless.
//
// The zero Max means no cap.
type Decorrelated struct {
	Base time.Duration
	Max  time.Duration
}

// Delay implements Schedule.
func (d Decorrelated) Delay(_ int, prev time.Duration, rnd Source) time.Duration {
	if d.Base <= 0 {
		return 0
	}
	max := d.Max
	if max <= 0 {
		max = math.MaxInt64
	}
	if prev < d.Base {
		prev = d.Base
	}
	hi := max
	if prev <= max/3 {
		hi = prev * 3
	}
	lo := min(d.Base, max)
	return uniform(rnd, lo, hi)
}

// Proportional waits min(Max, Base·Multiplier^(retry-1)) multiplied by a
// random factor in [1-Jitter, 1+Jitter]. Source: gRPC connection backoff
// (doc/connection-backoff.md; grpc-go internal/backoff DefaultConfig: base
// 1 s, multiplier 1.6, jitter 0.2, max 120 s). A factor in [0.5, 1.5]
// (Jitter 0.5) is the same shape, common in hand-written model-API clients. The jitter may take the
// result above Max by up to Jitter·Max, as in gRPC.
//
// The zero Multiplier means 2; the zero Max means no cap; Jitter is clamped
// to [0, 1].
type Proportional struct {
	Base       time.Duration
	Multiplier float64
	Jitter     float64
	Max        time.Duration
}

// GRPC returns gRPC's connection backoff: 1 s base, ×1.6, ±20 %, 120 s cap
// (grpc-go internal/backoff DefaultConfig). It is a function, not a
// variable, so no caller can change the schedule another gets.
func GRPC() Proportional {
	return Proportional{Base: time.Second, Multiplier: 1.6, Jitter: 0.2, Max: 120 * time.Second}
}

// Delay implements Schedule.
func (p Proportional) Delay(retry int, _ time.Duration, rnd Source) time.Duration {
	v := ceiling(p.Base, p.Max, p.Multiplier, retry)
	j := min(max(p.Jitter, 0), 1)
	if j == 0 || v == 0 {
		return v
	}
	spread := v
	if f := float64(v) * j; f < float64(v) {
		spread = time.Duration(f)
	}
	if v > math.MaxInt64-spread {
		return uniform(rnd, v-spread, math.MaxInt64)
	}
	return uniform(rnd, v-spread, v+spread)
}

// Constant waits the same time before every retry.
type Constant time.Duration

// Delay implements Schedule.
func (c Constant) Delay(int, time.Duration, Source) time.Duration {
	return max(time.Duration(c), 0)
}

// None retries at once. It is what gets written in a hurry ("retry
// immediately"); use it for tests and benchmarks, not for traffic.
type None struct{}

// Delay implements Schedule.
func (None) Delay(int, time.Duration, Source) time.Duration { return 0 }
